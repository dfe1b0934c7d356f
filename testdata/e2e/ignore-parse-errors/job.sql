-- Line 3 of bids.jsonl is not valid JSON; 'json.ignore-parse-errors' skips it.
CREATE TABLE auction_bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '1' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = 'bids.jsonl',
  'format' = 'json',
  'json.ignore-parse-errors' = 'true'
);

CREATE TABLE picked (
  item STRING,
  price DECIMAL(10, 2)
) WITH (
  'connector' = 'filesystem',
  'path' = 'picked.jsonl',
  'format' = 'json'
);

INSERT INTO picked SELECT item, price FROM auction_bids;
