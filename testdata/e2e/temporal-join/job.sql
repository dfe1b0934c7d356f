-- Orders priced at the exchange rate valid when they were placed: an
-- event-time temporal join against the versioned table of rates (a primary
-- key and a watermark). Each order waits until the watermark of both
-- inputs passes its time, then takes the latest rate at or before it. A
-- LEFT JOIN keeps orders with no rate yet (1), an unknown currency (5) or
-- no currency (6), with NULLs. Order 3 comes exactly at a rate change and
-- takes the new rate.
CREATE TABLE orders (oid BIGINT, cur STRING, amount DECIMAL(10, 2), ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts) WITH (
  'connector' = 'filesystem', 'path' = 'orders.jsonl', 'format' = 'json');
CREATE TABLE rates (cur STRING, rate DECIMAL(10, 4), uts TIMESTAMP(3),
  WATERMARK FOR uts AS uts, PRIMARY KEY (cur) NOT ENFORCED) WITH (
  'connector' = 'filesystem', 'path' = 'rates.jsonl', 'format' = 'json');
CREATE TABLE priced (oid BIGINT, ts TIMESTAMP(3), rate DECIMAL(10, 4), price DECIMAL(12, 2)) WITH (
  'connector' = 'filesystem', 'path' = 'priced.jsonl', 'format' = 'json');

INSERT INTO priced
SELECT o.oid, o.ts, r.rate, CAST(o.amount * r.rate AS DECIMAL(12, 2))
FROM orders AS o
LEFT JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.cur = r.cur;
