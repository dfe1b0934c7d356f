CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');

-- A GROUP BY of the window_start and window_end of a window aggregation's
-- rows is a window aggregation of the same windows (Flink's cascading
-- window aggregation, window-attached): append-only, so a filesystem sink
-- takes it. The suppliers' totals of each 10-minute window, and their
-- maximum per window.
CREATE TABLE top_supplier (window_start TIMESTAMP(3), window_end TIMESTAMP(3), suppliers BIGINT, top DECIMAL(38, 2))
WITH ('connector' = 'filesystem', 'path' = 'top.jsonl', 'format' = 'json');
INSERT INTO top_supplier
SELECT window_start, window_end, COUNT(*), MAX(total)
FROM (
  SELECT supplier_id, window_start, window_end, SUM(price) AS total
  FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
  GROUP BY supplier_id, window_start, window_end
)
GROUP BY window_start, window_end;
