CREATE TABLE L (id INT, num INT) WITH ('connector' = 'filesystem', 'path' = 'l.jsonl', 'format' = 'json');
CREATE TABLE R (id INT, num INT) WITH ('connector' = 'filesystem', 'path' = 'r.jsonl', 'format' = 'json');
-- The inputs of a set operation in IN cannot refer to the enclosing query.
SELECT id FROM L WHERE num IN (SELECT num FROM R WHERE R.id = L.id UNION SELECT num FROM R);
