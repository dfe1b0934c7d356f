CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');

-- The second and third items per supplier: a Top-N from the second row
-- (Flink's rankRange=[rankStart=2, rankEnd=3]); another bound tightens it.
SELECT supplier_id, item, rn FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY supplier_id ORDER BY price DESC) AS rn
  FROM bids
) WHERE rn BETWEEN 2 AND 4 AND rn < 4;

-- Only the second, its number unread.
SELECT supplier_id, item FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY supplier_id ORDER BY price DESC) AS rn
  FROM bids
) WHERE rn = 2;

-- Over windows: rows 2 and 3 of each window.
SELECT window_start, supplier_id, item FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, supplier_id ORDER BY price DESC) AS rn
  FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
) WHERE rn >= 2 AND rn <= 3;
