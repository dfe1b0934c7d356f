-- A window aggregation whose grouping sets leave window_end out of one
-- set: refused at the grouping set.
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
  item STRING,
  price DECIMAL(38, 2)
) WITH (
  'connector' = 'filesystem',
  'path' = 'totals.jsonl',
  'format' = 'json'
);

INSERT INTO totals
SELECT window_start, item, SUM(price)
FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
GROUP BY GROUPING SETS ((window_start, window_end, item), (window_start));
