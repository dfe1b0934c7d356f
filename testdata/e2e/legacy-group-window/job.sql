-- The deprecated group window syntax: GROUP BY TUMBLE(...) with
-- TUMBLE_START / TUMBLE_END.
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

CREATE TABLE totals (
  window_start TIMESTAMP(3),
  window_end TIMESTAMP(3),
  item STRING,
  bids BIGINT,
  total DECIMAL(38, 2)
) WITH (
  'connector' = 'filesystem',
  'path' = 'totals.jsonl',
  'format' = 'json'
);

INSERT INTO totals
SELECT
  TUMBLE_START(bidtime, INTERVAL '10' MINUTE),
  TUMBLE_END(bidtime, INTERVAL '10' MINUTE),
  item,
  COUNT(*),
  SUM(price)
FROM bids
GROUP BY TUMBLE(bidtime, INTERVAL '10' MINUTE), item;
