CREATE TABLE L (id INT, num INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'l.jsonl', 'format' = 'json');
CREATE TABLE R (id INT, num INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'r.jsonl', 'format' = 'json');
-- IN with a subquery over plain streams is a regular SEMI join, and NOT
-- EXISTS a regular ANTI join (updating: a row leaves the result when its
-- first match arrives).
SELECT id, num FROM L
WHERE num IN (SELECT num FROM R WHERE R.id > 2)
  AND NOT EXISTS (SELECT * FROM R WHERE R.id = L.id AND R.num < L.num);
