-- Flink's Group Aggregation > GROUPING SETS example: an Expand emits each
-- row once per set, with NULL for the keys the set leaves out and the set's
-- expand id $e ((supplier_id, rating) 0, (supplier_id) 1, () 3), and the
-- aggregation groups by the keys and $e.
SELECT supplier_id, rating, COUNT(*) AS total
FROM (VALUES
    ('supplier1', 'product1', 4),
    ('supplier1', 'product2', 3),
    ('supplier2', 'product3', 3),
    ('supplier2', 'product4', 4))
AS Products(supplier_id, product_id, rating)
GROUP BY GROUPING SETS ((supplier_id, rating), (supplier_id), ());
