CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING
) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');

-- A CTE sees the CTEs declared before it in the same WITH (as in Flink).
WITH c0 AS (SELECT item, price FROM bids WHERE price > 1),
     c1 AS (SELECT item FROM c0 WHERE price < 5),
     c2 AS (SELECT c1.item FROM c1 JOIN c0 ON c1.item = c0.item)
SELECT * FROM c2;
