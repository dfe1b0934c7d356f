CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');

-- SELECT DISTINCT of windowed rows with both bounds is a window
-- aggregation without calls, grouped by the other columns.
SELECT DISTINCT supplier_id, ws, we FROM (
  SELECT supplier_id, item, window_start AS ws, window_end AS we, COUNT(*) AS cnt
  FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
  GROUP BY supplier_id, item, window_start, window_end
);
