CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');

-- Calcite's message: GROUPING takes grouped expressions only.
SELECT item, GROUPING(item, price) FROM bids GROUP BY CUBE (item, supplier_id);
