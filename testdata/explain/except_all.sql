CREATE TABLE T1 (a INT, b BIGINT, c STRING) WITH ('connector' = 'filesystem', 'path' = 't1.jsonl', 'format' = 'json');
CREATE TABLE T2 (d INT, e BIGINT, f STRING) WITH ('connector' = 'filesystem', 'path' = 't2.jsonl', 'format' = 'json');
CREATE TABLE T3 (g INT, h BIGINT, i STRING) WITH ('connector' = 'filesystem', 'path' = 't3.jsonl', 'format' = 'json');
-- EXCEPT ALL: markers +1 and -1, their sum per distinct row, the rows
-- whose sum is positive, replicated that many times.
SELECT c FROM T1 EXCEPT ALL SELECT f FROM T2;
