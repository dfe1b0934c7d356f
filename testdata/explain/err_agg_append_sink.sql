-- An aggregate without GROUP BY updates its one row: the error points at
-- the first aggregate call.
CREATE TABLE a (x STRING, n INT) WITH ('connector' = 'filesystem', 'path' = 'a.jsonl', 'format' = 'json');
CREATE TABLE out (c BIGINT, s INT) WITH ('connector' = 'filesystem', 'path' = 'out.jsonl', 'format' = 'json');

INSERT INTO out SELECT COUNT(*), SUM(n) FROM a;
