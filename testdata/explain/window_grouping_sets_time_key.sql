CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');

-- The time column is also a key that a set leaves out: the Expand copies
-- it (bidtime_0), so that every row keeps its time for the window and for
-- MAX(bidtime).
SELECT window_start, bidtime, COUNT(*), MAX(bidtime)
FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
GROUP BY window_start, window_end, ROLLUP (bidtime);
