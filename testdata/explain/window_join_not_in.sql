CREATE TABLE L (id INT, num INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'l.jsonl', 'format' = 'json');
CREATE TABLE R (id INT, num INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'r.jsonl', 'format' = 'json');
-- NOT IN correlated on the same windows is an ANTI window join (Flink's
-- documented example), null-aware per window: a row stays when no row of
-- its window on the right has its num or a NULL num.
SELECT L.num, L.window_start, L.window_end
FROM (SELECT * FROM TABLE(TUMBLE(TABLE L, DESCRIPTOR(ts), INTERVAL '5' MINUTES))) L
WHERE L.num NOT IN (
  SELECT num FROM (SELECT * FROM TABLE(TUMBLE(TABLE R, DESCRIPTOR(ts), INTERVAL '5' MINUTES))) R
  WHERE L.window_start = R.window_start AND L.window_end = R.window_end);
