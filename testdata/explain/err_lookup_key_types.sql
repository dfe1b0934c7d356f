CREATE TABLE orders (id BIGINT, amount DOUBLE, pt AS PROCTIME())
WITH ('connector' = 'filesystem', 'path' = 'orders.jsonl', 'format' = 'json');
CREATE TABLE customers (cust STRING, name STRING, tier INT)
WITH ('connector' = 'filesystem', 'path' = 'customers.csv', 'format' = 'csv');

SELECT * FROM orders o JOIN customers FOR SYSTEM_TIME AS OF o.pt c ON o.amount = c.tier;
