CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');

-- Window bounds inside every set are the same as beside them; they count
-- in the expand id's bits (item, window_start, window_end, supplier_id),
-- as in Flink: (item, ...) is 1, (supplier_id, ...) is 8.
SELECT window_start, item, supplier_id, GROUPING_ID(item, supplier_id), COUNT(*)
FROM TABLE(HOP(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES, INTERVAL '10' MINUTES))
GROUP BY GROUPING SETS ((item, window_start, window_end), (supplier_id, window_start, window_end));
