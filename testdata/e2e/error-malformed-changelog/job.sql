-- Line 2 of changes.jsonl has an op debezium does not know: by default
-- the job stops with an error naming the table, the line and the field.
CREATE TABLE cdc (
  id INT,
  k STRING,
  v BIGINT
) WITH (
  'connector' = 'filesystem',
  'path' = 'changes.jsonl',
  'format' = 'debezium-json'
);

CREATE TABLE copy (
  id INT,
  k STRING,
  v BIGINT
) WITH (
  'connector' = 'filesystem',
  'path' = 'copy.jsonl',
  'format' = 'debezium-json'
);

INSERT INTO copy SELECT * FROM cdc;
