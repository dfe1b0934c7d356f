CREATE TABLE T1 (a INT, b BIGINT, c STRING) WITH ('connector' = 'filesystem', 'path' = 't1.jsonl', 'format' = 'json');
CREATE TABLE T2 (d INT, e BIGINT, f STRING) WITH ('connector' = 'filesystem', 'path' = 't2.jsonl', 'format' = 'json');
CREATE TABLE T3 (g INT, h BIGINT, i STRING) WITH ('connector' = 'filesystem', 'path' = 't3.jsonl', 'format' = 'json');
-- INTERSECT is a SEMI join of the two inputs on every column, NULL equal
-- to NULL, under one distinct aggregate, as Flink plans it.
SELECT c FROM T1 INTERSECT SELECT f FROM T2;
