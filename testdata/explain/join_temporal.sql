CREATE TABLE orders (id BIGINT, cur STRING, amount DOUBLE, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
WITH ('connector' = 'filesystem', 'path' = 'orders.jsonl', 'format' = 'json');
CREATE TABLE rates (cur STRING, rate DOUBLE, uts TIMESTAMP(3), WATERMARK FOR uts AS uts, PRIMARY KEY (cur) NOT ENFORCED)
WITH ('connector' = 'filesystem', 'path' = 'rates.jsonl', 'format' = 'json');

-- Each order is priced at the rate valid at its time. A condition on the
-- orders moves below the join; one on the rates stays above it: filtering
-- versions would change which one is valid.
SELECT o.id, o.ts, o.amount * r.rate AS price
FROM orders AS o
JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.cur = r.cur
WHERE o.amount > 0 AND r.rate < 10;
