CREATE TABLE orders (id BIGINT, cust STRING, pt AS PROCTIME())
WITH ('connector' = 'filesystem', 'path' = 'orders.jsonl', 'format' = 'json');
CREATE TABLE customers (cust STRING, name STRING)
WITH ('connector' = 'datagen');

SELECT * FROM orders o JOIN customers FOR SYSTEM_TIME AS OF o.pt c ON o.cust = c.cust;
