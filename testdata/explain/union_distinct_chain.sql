CREATE TABLE T1 (a INT, b BIGINT, c STRING) WITH ('connector' = 'filesystem', 'path' = 't1.jsonl', 'format' = 'json');
CREATE TABLE T2 (d INT, e BIGINT, f STRING) WITH ('connector' = 'filesystem', 'path' = 't2.jsonl', 'format' = 'json');
CREATE TABLE T3 (g INT, h BIGINT, i STRING) WITH ('connector' = 'filesystem', 'path' = 't3.jsonl', 'format' = 'json');
-- A chain of UNIONs is one distinct aggregate over one Union of every
-- input (a UNION ALL below a UNION included); a UNION ALL above a UNION
-- keeps the UNION's duplicates apart.
SELECT c FROM T1 UNION SELECT f FROM T2 UNION ALL SELECT i FROM T3 UNION SELECT c FROM T1;
SELECT c FROM T1 UNION SELECT f FROM T2 UNION ALL SELECT i FROM T3;
