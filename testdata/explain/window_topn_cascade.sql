CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');

-- A window Top-N keeps window_time a time attribute: a window aggregation
-- can follow it (the top 3 bids of each 10-minute window, counted per hour).
WITH top3 AS (
  SELECT item, price, window_time FROM (
    SELECT bidtime, price, item, window_start, window_end, window_time,
      ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY price DESC) AS rn
    FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
  ) WHERE rn <= 3
)
SELECT window_start, window_end, COUNT(*) AS bids, MAX(price) AS top
FROM TABLE(TUMBLE(TABLE top3, DESCRIPTOR(window_time), INTERVAL '1' HOUR))
GROUP BY window_start, window_end;
