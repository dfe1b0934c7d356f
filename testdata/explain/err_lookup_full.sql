CREATE TABLE orders (id BIGINT, cust STRING, pt AS PROCTIME())
WITH ('connector' = 'filesystem', 'path' = 'orders.jsonl', 'format' = 'json');
CREATE TABLE customers (cust STRING, name STRING)
WITH ('connector' = 'filesystem', 'path' = 'customers.csv', 'format' = 'csv');

SELECT * FROM orders o RIGHT JOIN customers FOR SYSTEM_TIME AS OF o.pt c ON o.cust = c.cust;
