-- A ROW_NUMBER() with no bound plans, but cannot run (see the end-to-end
-- case error-rank-unbounded).
CREATE TABLE t (k INT, v INT) WITH ('connector' = 'filesystem', 'path' = 't.jsonl', 'format' = 'json');
CREATE TABLE out (k INT, v INT, rn BIGINT) WITH ('connector' = 'print');

INSERT INTO out SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v) FROM t;
