CREATE TABLE L (id INT NOT NULL, num INT NOT NULL) WITH ('connector' = 'filesystem', 'path' = 'l.jsonl', 'format' = 'json');
CREATE TABLE R (id INT, num INT NOT NULL) WITH ('connector' = 'filesystem', 'path' = 'r.jsonl', 'format' = 'json');
-- Between NOT NULL columns, NOT IN is a plain ANTI join on the key.
SELECT id FROM L WHERE num NOT IN (SELECT num FROM R);
