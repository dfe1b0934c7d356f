CREATE TABLE T1 (a INT, b BIGINT, c STRING) WITH ('connector' = 'filesystem', 'path' = 't1.jsonl', 'format' = 'json');
CREATE TABLE T2 (d INT, e BIGINT, f STRING) WITH ('connector' = 'filesystem', 'path' = 't2.jsonl', 'format' = 'json');
CREATE TABLE T3 (g INT, h BIGINT, i STRING) WITH ('connector' = 'filesystem', 'path' = 't3.jsonl', 'format' = 'json');
-- EXCEPT is an ANTI join on every column, NULL equal to NULL, under one
-- distinct aggregate; columns of different types meet at their common
-- type (INT and BIGINT: BIGINT).
SELECT a, c FROM T1 EXCEPT SELECT e, f FROM T2;
