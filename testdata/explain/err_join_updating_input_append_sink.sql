-- An inner join of an updating input updates its result too, but it is
-- not what makes the result updating: the error names the GROUP BY below
-- it, the first operator that turns append-only rows into updates.
CREATE TABLE a (k INT, x STRING) WITH ('connector' = 'filesystem', 'path' = 'a.jsonl', 'format' = 'json');
CREATE TABLE b (k INT, y STRING) WITH ('connector' = 'filesystem', 'path' = 'b.jsonl', 'format' = 'json');
CREATE TABLE out (x STRING, n BIGINT) WITH ('connector' = 'filesystem', 'path' = 'out.jsonl', 'format' = 'json');

INSERT INTO out
SELECT a.x, c.n FROM a
JOIN (SELECT k, COUNT(*) AS n FROM b GROUP BY k) AS c ON a.k = c.k;
