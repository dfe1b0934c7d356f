-- Late data. The test writes bids.jsonl: 1100 bids at 08:20:00 + i * 0.5 s
-- (item X, price 1.00; more than one read batch, so the watermark has
-- passed 08:20 before the rows below are read), then:
--   08:03:00 price 100.00  late: window [08:00, 08:10) is already past the watermark, dropped
--   08:20:30 price   0.50  out of order but its window [08:20, 08:30) is still open, kept
--   08:35:00 price   2.00
CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '5' SECOND
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
SELECT window_start, window_end, item, COUNT(*), SUM(price)
FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
GROUP BY window_start, window_end, item;
