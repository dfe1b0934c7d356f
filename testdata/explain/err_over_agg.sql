CREATE TABLE t (k INT, v INT) WITH ('connector' = 'filesystem', 'path' = 't.jsonl', 'format' = 'json');

SELECT k, SUM(v) OVER (PARTITION BY k ORDER BY v) FROM t;
