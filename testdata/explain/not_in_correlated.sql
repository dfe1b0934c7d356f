CREATE TABLE L (id INT, num INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'l.jsonl', 'format' = 'json');
CREATE TABLE R (id INT, num INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'r.jsonl', 'format' = 'json');
-- A correlated NOT IN: the correlation is a key that partitions the rows
-- (and a NULL id matches nothing); the null-aware pair comes after it. A
-- condition on both sides is checked on each pair, as in Flink.
SELECT id, num FROM L
WHERE num + 1 NOT IN (SELECT num FROM R WHERE R.id = L.id AND R.ts > L.ts);
