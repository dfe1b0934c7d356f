CREATE TABLE a (k INT, x STRING) WITH ('connector' = 'filesystem', 'path' = 'a.jsonl', 'format' = 'json');
CREATE TABLE b (k INT, y STRING) WITH ('connector' = 'filesystem', 'path' = 'b.jsonl', 'format' = 'json');

SELECT * FROM a, b
WHERE a.k < b.k;
