CREATE TABLE a (k INT, x STRING) WITH ('connector' = 'filesystem', 'path' = 'a.jsonl', 'format' = 'json');
CREATE TABLE b (k INT, y STRING) WITH ('connector' = 'filesystem', 'path' = 'b.jsonl', 'format' = 'json');
CREATE TABLE out (x STRING, y STRING) WITH ('connector' = 'filesystem', 'path' = 'out.jsonl', 'format' = 'json');

INSERT INTO out SELECT a.x, b.y FROM a LEFT JOIN b ON a.k = b.k;
