-- A debezium-json changelog of a table (id, k, v): snapshot reads,
-- inserts, updates (row 2 moves from k = 'b' to 'c') and deletes. At the
-- end the table holds (1, 'a', 12) and (2, 'c', 5).
CREATE TABLE cdc (
  id INT,
  k STRING,
  v BIGINT
) WITH (
  'connector' = 'filesystem',
  'path' = 'changes.jsonl',
  'format' = 'debezium-json'
);

-- The changes of the rows with v > 0, as canal-json: an update is written
-- as a DELETE of the old row and an INSERT of the new one.
CREATE TABLE positive (
  id INT,
  k STRING,
  v BIGINT
) WITH (
  'connector' = 'filesystem',
  'path' = 'positive.jsonl',
  'format' = 'canal-json'
);

-- The aggregate per k, as an upsert sink keyed by k. The input is one
-- batch, so each key's row is written once, with its final value; key
-- 'b' ends with no rows and is never written.
CREATE TABLE totals (
  k STRING,
  total BIGINT,
  n BIGINT,
  PRIMARY KEY (k) NOT ENFORCED
) WITH (
  'connector' = 'filesystem',
  'path' = 'totals.jsonl',
  'format' = 'debezium-json'
);

EXECUTE STATEMENT SET BEGIN
INSERT INTO positive SELECT id, k, v FROM cdc WHERE v > 0;
INSERT INTO totals SELECT k, SUM(v), COUNT(*) FROM cdc GROUP BY k;
END;
