CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');

-- RANK and DENSE_RANK Top-N without windows: updating, like ROW_NUMBER's;
-- bids that tie on price share a number.
SELECT supplier_id, item, price, r FROM (
  SELECT *, RANK() OVER (PARTITION BY supplier_id ORDER BY price DESC) AS r FROM bids
) WHERE r <= 2;

SELECT supplier_id, item, price FROM (
  SELECT *, DENSE_RANK() OVER (PARTITION BY supplier_id ORDER BY price DESC) AS r FROM bids
) WHERE r = 1;
