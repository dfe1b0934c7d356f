CREATE TABLE L (id INT, num INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'l.jsonl', 'format' = 'json');
CREATE TABLE R (id INT, num INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'r.jsonl', 'format' = 'json');
-- A window join may follow another (as in Flink): the rows of an inner
-- join are in the window of either side, whose bounds both name it.
WITH l AS (SELECT * FROM TABLE(TUMBLE(TABLE L, DESCRIPTOR(ts), INTERVAL '5' MINUTES))),
     r AS (SELECT * FROM TABLE(TUMBLE(TABLE R, DESCRIPTOR(ts), INTERVAL '5' MINUTES)))
SELECT a.id, a.num, b.num, c.num
FROM l a
JOIN r b ON a.window_start = b.window_start AND a.window_end = b.window_end AND a.id = b.id
LEFT JOIN r c ON b.window_start = c.window_start AND a.window_end = c.window_end AND a.num = c.num;
