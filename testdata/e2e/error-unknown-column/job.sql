CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '1' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = 'bids.jsonl',
  'format' = 'json'
);

CREATE TABLE picked (
  item STRING,
  price DECIMAL(10, 2)
) WITH (
  'connector' = 'filesystem',
  'path' = 'picked.jsonl',
  'format' = 'json'
);

INSERT INTO picked SELECT item, prise FROM bids;
