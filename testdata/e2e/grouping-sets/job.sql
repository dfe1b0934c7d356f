-- The GROUPING SETS example of Flink's Group Aggregation page, written as
-- a changelog (the result is updating): per supplier and rating, per
-- supplier, and the grand total, with GROUPING_ID telling the sets apart
-- (a NULL rating of the data would have 0 in its bit).
CREATE TABLE totals (
  supplier_id STRING,
  rating INT,
  total BIGINT,
  g BIGINT
) WITH (
  'connector' = 'filesystem',
  'path' = 'totals.jsonl',
  'format' = 'debezium-json'
);

INSERT INTO totals
SELECT supplier_id, rating, COUNT(*) AS total, GROUPING_ID(supplier_id, rating) AS g
FROM (VALUES
    ('supplier1', 'product1', 4),
    ('supplier1', 'product2', 3),
    ('supplier2', 'product3', 3),
    ('supplier2', 'product4', 4))
AS Products(supplier_id, product_id, rating)
GROUP BY GROUPING SETS ((supplier_id, rating), (supplier_id), ());
