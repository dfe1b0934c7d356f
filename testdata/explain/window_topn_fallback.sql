CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');

-- PARTITION BY window_start alone over a window TVF does not identify the
-- window: this is the updating Top-N, as in Flink.
SELECT * FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start ORDER BY price DESC) AS rn
  FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
) WHERE rn <= 3;

-- Over a window aggregation, window_end alone does not either.
SELECT * FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_end ORDER BY cnt DESC) AS rn
  FROM (
    SELECT window_start, window_end, item, COUNT(*) AS cnt
    FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
    GROUP BY window_start, window_end, item
  )
) WHERE rn <= 3;
