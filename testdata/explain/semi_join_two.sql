CREATE TABLE L (id INT, num INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'l.jsonl', 'format' = 'json');
CREATE TABLE R (id INT, num INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'r.jsonl', 'format' = 'json');
-- Two subqueries: an IN whose operand is computed (a column is added for
-- it), then a NOT EXISTS whose pair condition reads both sides.
SELECT id FROM L
WHERE num + 1 IN (SELECT num FROM R)
  AND NOT EXISTS (SELECT * FROM R WHERE R.id = L.id AND R.num > L.num);
