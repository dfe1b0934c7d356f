CREATE TABLE L (id INT, num INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'l.jsonl', 'format' = 'json');
CREATE TABLE R (id INT, num INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'r.jsonl', 'format' = 'json');
-- NOT IN over nullable columns is Flink's null-aware ANTI join: a row of L
-- stays only if no num of R equals its num, and none is NULL (else NOT IN
-- is unknown); a NULL num of L stays only while R has no row. Without
-- another key, one task holds both sides (Flink's single distribution).
SELECT id FROM L WHERE num NOT IN (SELECT num FROM R);
