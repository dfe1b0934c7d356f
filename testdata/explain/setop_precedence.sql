CREATE TABLE T1 (a INT, b BIGINT, c STRING) WITH ('connector' = 'filesystem', 'path' = 't1.jsonl', 'format' = 'json');
CREATE TABLE T2 (d INT, e BIGINT, f STRING) WITH ('connector' = 'filesystem', 'path' = 't2.jsonl', 'format' = 'json');
CREATE TABLE T3 (g INT, h BIGINT, i STRING) WITH ('connector' = 'filesystem', 'path' = 't3.jsonl', 'format' = 'json');
-- INTERSECT binds tighter than UNION and EXCEPT; EXCEPT of an updating
-- input (the INTERSECT's aggregate) retracts.
SELECT c FROM T1 EXCEPT SELECT f FROM T2 INTERSECT SELECT i FROM T3;
