CREATE TABLE orders (
  oid BIGINT,
  cust STRING,
  amount DECIMAL(10, 2),
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts
) WITH ('connector' = 'filesystem', 'path' = 'orders.jsonl', 'format' = 'json');
CREATE TABLE custs (cid STRING, name STRING, tier INT) WITH ('connector' = 'filesystem', 'path' = 'custs.jsonl', 'format' = 'json');

SELECT o.oid, c.name, o.amount * 2 AS doubled
FROM orders o JOIN custs c ON o.cust = c.cid AND c.tier > 1
WHERE o.amount > 10;
