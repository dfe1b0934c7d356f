CREATE TABLE L (id INT, num INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'l.jsonl', 'format' = 'json');
CREATE TABLE R (id INT, num INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'r.jsonl', 'format' = 'json');

-- TUMBLE on one side and HOP on the other are different windows.
SELECT L.num, R.num
FROM TABLE(TUMBLE(TABLE L, DESCRIPTOR(ts), INTERVAL '5' MINUTES)) L
JOIN TABLE(HOP(TABLE R, DESCRIPTOR(ts), INTERVAL '5' MINUTES, INTERVAL '5' MINUTES)) R
  ON L.window_start = R.window_start AND L.window_end = R.window_end;
