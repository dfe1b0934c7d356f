CREATE TABLE L (id INT, num INT) WITH ('connector' = 'filesystem', 'path' = 'l.jsonl', 'format' = 'json');
CREATE TABLE R (id INT, num INT) WITH ('connector' = 'filesystem', 'path' = 'r.jsonl', 'format' = 'json');
-- A set operation of IN must give one column.
SELECT id FROM L WHERE num IN (SELECT id, num FROM R INTERSECT SELECT id, num FROM R);
