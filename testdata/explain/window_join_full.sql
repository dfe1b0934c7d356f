CREATE TABLE L (id INT, num INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'l.jsonl', 'format' = 'json');
CREATE TABLE R (id INT, num INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'r.jsonl', 'format' = 'json');

-- A FULL OUTER window join pads each side's unmatched rows when their
-- window ends; its output is append-only.
SELECT L.num AS lnum, R.num AS rnum,
       COALESCE(L.window_start, R.window_start) AS window_start,
       COALESCE(L.window_end, R.window_end) AS window_end
FROM (SELECT * FROM TABLE(HOP(TABLE L, DESCRIPTOR(ts), INTERVAL '1' MINUTES, INTERVAL '5' MINUTES))) L
FULL JOIN (SELECT * FROM TABLE(HOP(TABLE R, DESCRIPTOR(ts), INTERVAL '1' MINUTES, INTERVAL '5' MINUTES))) R
  ON L.window_start = R.window_start AND L.window_end = R.window_end AND L.id = R.id;
