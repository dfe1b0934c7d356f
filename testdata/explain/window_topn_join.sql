CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');

-- The rows of a window join carry their window (the sides'): a Top-N
-- partitioned by its bounds is a window Top-N, as in Flink.
SELECT window_start, item, item2 FROM (
  SELECT a.window_start, a.item, b.item AS item2,
    ROW_NUMBER() OVER (PARTITION BY a.window_start, a.window_end ORDER BY a.price DESC, b.price DESC) AS rn
  FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES)) a
  JOIN TABLE(TUMBLE(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES)) b
    ON a.window_start = b.window_start AND a.window_end = b.window_end AND a.supplier_id = b.supplier_id
) WHERE rn = 1;
