CREATE TABLE a (k INT, x STRING) WITH ('connector' = 'filesystem', 'path' = 'a.jsonl', 'format' = 'json');
CREATE TABLE b (k BIGINT, y STRING) WITH ('connector' = 'filesystem', 'path' = 'b.jsonl', 'format' = 'json');

SELECT a.x, b.y FROM a FULL OUTER JOIN b ON b.k = a.k AND a.x < b.y;
