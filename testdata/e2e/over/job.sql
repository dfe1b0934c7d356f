-- OVER aggregation. The test writes bids.jsonl: 1100 bids of item X at
-- 08:20:00 + i * 0.5 s (more than one read batch, so that the watermark
-- has passed 08:20 before the rows below are read), then bids of item Y:
--   08:03:00 100.00  late: behind the watermark, dropped and counted
--   08:30:00   2.00
--   08:31:30   5.00
--   08:30:00   3.00  out of order; a peer of the first 08:30:00 row
--   08:30:20   4.00
--   08:40:00   1.00
-- Rows come out in time order (peers in arrival order), once the
-- watermark has passed them or at the end of the input.
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

CREATE TABLE by_range (item STRING, bidtime TIMESTAMP(3), price DECIMAL(10, 2), n BIGINT, total DECIMAL(38, 2))
WITH ('connector' = 'filesystem', 'path' = 'by_range.jsonl', 'format' = 'json');

CREATE TABLE by_rows (item STRING, bidtime TIMESTAMP(3), price DECIMAL(10, 2), n BIGINT, total DECIMAL(38, 2))
WITH ('connector' = 'filesystem', 'path' = 'by_rows.jsonl', 'format' = 'json');

-- The bids of the minute up to each bid: peers see each other.
INSERT INTO by_range
SELECT item, bidtime, price, COUNT(*) OVER w, SUM(price) OVER w
FROM bids WHERE item = 'Y'
WINDOW w AS (PARTITION BY item ORDER BY bidtime RANGE BETWEEN INTERVAL '1' MINUTE PRECEDING AND CURRENT ROW);

-- Each bid and the one before it.
INSERT INTO by_rows
SELECT item, bidtime, price,
  COUNT(*) OVER (PARTITION BY item ORDER BY bidtime ROWS BETWEEN 1 PRECEDING AND CURRENT ROW),
  SUM(price) OVER (PARTITION BY item ORDER BY bidtime ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)
FROM bids WHERE item = 'Y';
