CREATE TABLE orders (id BIGINT, cust STRING, region INT, amount DOUBLE, pt AS PROCTIME())
WITH ('connector' = 'filesystem', 'path' = 'orders.jsonl', 'format' = 'json');
CREATE TABLE customers (region BIGINT, cust STRING, name STRING, tier INT)
WITH ('connector' = 'filesystem', 'path' = 'customers.csv', 'format' = 'csv',
      'lookup.full-cache.reload-interval' = '1 min');

-- The key set is (region, cust), whatever the order of ON; the rest of
-- ON is checked on each pair, and a WHERE on the customer stays above.
-- An INT key looks a BIGINT column up as a BIGINT.
SELECT o.id, c.name, o.amount
FROM orders AS o
JOIN customers FOR SYSTEM_TIME AS OF o.pt AS c ON o.cust = c.cust AND c.region = o.region AND c.tier > o.region
WHERE o.amount > 0 AND c.name <> 'x';
