CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');

-- Grouping sets over windowed rows: a window aggregation when every set
-- groups by both bounds.
SELECT ws, supplier_id, SUM(cnt), GROUPING(supplier_id)
FROM (
  SELECT supplier_id, item, window_start AS ws, window_end AS we, COUNT(*) AS cnt
  FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
  GROUP BY supplier_id, item, window_start, window_end
)
GROUP BY ws, we, ROLLUP (supplier_id);
