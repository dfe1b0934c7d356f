CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');

SELECT item,
  SUM(price) OVER (PARTITION BY item ORDER BY bidtime),
  COUNT(*) OVER (PARTITION BY supplier_id ORDER BY bidtime)
FROM bids;
