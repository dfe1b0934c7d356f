CREATE TABLE T1 (a INT, b BIGINT, c STRING) WITH ('connector' = 'filesystem', 'path' = 't1.jsonl', 'format' = 'json');
CREATE TABLE T2 (d INT, e BIGINT, f STRING) WITH ('connector' = 'filesystem', 'path' = 't2.jsonl', 'format' = 'json');
CREATE TABLE T3 (g INT, h BIGINT, i STRING) WITH ('connector' = 'filesystem', 'path' = 't3.jsonl', 'format' = 'json');
-- INTERSECT ALL: each input's rows tagged with a marker, one Union, a
-- count of each side's markers per distinct row, the rows both sides
-- have, each replicated min(left, right) times (Flink's ReplicateRows).
SELECT c FROM T1 INTERSECT ALL SELECT f FROM T2;
