CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');

SELECT * FROM (
  SELECT *, RANK() OVER (PARTITION BY window_end ORDER BY price DESC) AS r,
    ROW_NUMBER() OVER (PARTITION BY window_end ORDER BY price DESC) AS rn
  FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
) WHERE r <= 3;
