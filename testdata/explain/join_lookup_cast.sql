CREATE TABLE orders (id BIGINT, cust STRING, pt AS PROCTIME())
WITH ('connector' = 'filesystem', 'path' = 'orders.jsonl', 'format' = 'json');
CREATE TABLE customers (cust STRING, name STRING, score DOUBLE)
WITH ('connector' = 'filesystem', 'path' = 'customers.csv', 'format' = 'csv');

-- The comparison widens the key to the column's type: a lookup by DOUBLE.
SELECT * FROM orders o JOIN customers FOR SYSTEM_TIME AS OF o.pt c ON o.id = c.score;
