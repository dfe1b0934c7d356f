CREATE TABLE orders (id BIGINT, cur STRING, ts TIMESTAMP(3), pt AS PROCTIME(), WATERMARK FOR ts AS ts)
WITH ('connector' = 'filesystem', 'path' = 'orders.jsonl', 'format' = 'json');
CREATE TABLE rates (cur STRING, rate DOUBLE, uts TIMESTAMP(3), PRIMARY KEY (cur) NOT ENFORCED)
WITH ('connector' = 'filesystem', 'path' = 'rates.jsonl', 'format' = 'json');

SELECT * FROM orders o JOIN rates FOR SYSTEM_TIME AS OF o.ts r ON o.cur = r.cur;
