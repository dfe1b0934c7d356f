CREATE TABLE L (id INT, num INT) WITH ('connector' = 'filesystem', 'path' = 'l.jsonl', 'format' = 'json');
CREATE TABLE R (id INT, num INT) WITH ('connector' = 'filesystem', 'path' = 'r.jsonl', 'format' = 'json');
CREATE TABLE S (id INT, num BIGINT) WITH ('connector' = 'filesystem', 'path' = 's.jsonl', 'format' = 'json');
-- IN of a set operation: a SEMI join with its rows (here a UNION's, under
-- its aggregate), on their one column.
SELECT id FROM L WHERE num IN (SELECT num FROM R UNION SELECT num FROM S);
-- NOT IN of one, null-aware: an EXCEPT's rows may hold a NULL.
SELECT id FROM L WHERE num NOT IN (SELECT num FROM R EXCEPT SELECT num FROM S);
