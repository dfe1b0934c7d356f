CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');

-- Top-2 items per supplier: the bound on the row number moves into the Rank.
SELECT supplier_id, item, price, rn FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY supplier_id ORDER BY price DESC) AS rn
  FROM bids WHERE price > 1
) WHERE rn <= 2 AND item <> 'X';
