CREATE TABLE orders (id BIGINT, cust STRING, amount DOUBLE, pt AS PROCTIME())
WITH ('connector' = 'filesystem', 'path' = 'orders.jsonl', 'format' = 'json');
CREATE TABLE customers (cust STRING, name STRING, tier INT)
WITH ('connector' = 'filesystem', 'path' = 'customers.csv', 'format' = 'csv');

-- A LEFT lookup join pads unmatched orders; a key may be an expression of
-- the input or a constant. A condition of ON on the orders stays in the
-- join (it decides padding); the output keeps the processing-time
-- attribute, so a window can follow.
CREATE VIEW enriched AS
SELECT o.id, o.pt, c.name
FROM orders AS o
LEFT JOIN customers FOR SYSTEM_TIME AS OF o.pt AS c
  ON UPPER(o.cust) = c.cust AND c.tier = 2 AND o.amount > 10;

SELECT window_start, COUNT(*) AS n, COUNT(name) AS known
FROM TABLE(TUMBLE(TABLE enriched, DESCRIPTOR(pt), INTERVAL '1' MINUTE))
GROUP BY window_start, window_end;
