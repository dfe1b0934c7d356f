-- ROW_NUMBER() is Top-N only when the enclosing query bounds the row
-- number; an unbounded row number is refused.
CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING
) WITH (
  'connector' = 'filesystem',
  'path' = 'bids.jsonl',
  'format' = 'json'
);
CREATE TABLE ranked (item STRING, rn BIGINT) WITH ('connector' = 'print');

INSERT INTO ranked
SELECT item, ROW_NUMBER() OVER (PARTITION BY supplier_id ORDER BY price DESC) FROM bids;
