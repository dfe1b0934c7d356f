CREATE TABLE a (k INT, x STRING) WITH ('connector' = 'filesystem', 'path' = 'a.jsonl', 'format' = 'json');
CREATE TABLE b (k STRING, y STRING) WITH ('connector' = 'filesystem', 'path' = 'b.jsonl', 'format' = 'json');

SELECT * FROM a JOIN b ON a.k = b.k;
