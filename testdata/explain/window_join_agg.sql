CREATE TABLE L (id INT, num INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'l.jsonl', 'format' = 'json');
CREATE TABLE R (id INT, num INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'r.jsonl', 'format' = 'json');

-- The inputs of a window join may be window aggregations: per window
-- counts of each side, joined by key and window.
SELECT a.id, a.cnt AS lcnt, b.cnt AS rcnt, a.window_start, a.window_end
FROM (SELECT id, window_start, window_end, COUNT(*) AS cnt
      FROM TABLE(TUMBLE(TABLE L, DESCRIPTOR(ts), INTERVAL '1' MINUTES)) GROUP BY id, window_start, window_end) a
LEFT JOIN (SELECT id, window_start, window_end, COUNT(*) AS cnt
      FROM TABLE(TUMBLE(TABLE R, DESCRIPTOR(ts), INTERVAL '1' MINUTES)) GROUP BY id, window_start, window_end) b
  ON a.window_start = b.window_start AND a.window_end = b.window_end AND a.id = b.id;
