-- Window joins: orders and payments in the same 10-minute tumbling window
-- and of the same customer. A FULL OUTER window join pads what has no
-- match in its window when the window ends (erin's payment at 08:31 is in
-- a later window than her order); IN and NOT EXISTS over the same windows
-- are SEMI and ANTI window joins. Every output is append-only. IN over
-- the plain tables is a regular SEMI join (append-only too: its inputs
-- are).
CREATE TABLE orders (oid BIGINT, cust STRING, amount DECIMAL(10, 2), ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'orders.jsonl', 'format' = 'json');
CREATE TABLE payments (cust STRING, paid DECIMAL(10, 2), ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'payments.jsonl', 'format' = 'json');

CREATE TABLE matched (oid BIGINT, cust STRING, amount DECIMAL(10, 2), pcust STRING, paid DECIMAL(10, 2),
  window_start TIMESTAMP(3), window_end TIMESTAMP(3))
WITH ('connector' = 'filesystem', 'path' = 'matched.jsonl', 'format' = 'json');
CREATE TABLE paid (oid BIGINT, window_start TIMESTAMP(3))
WITH ('connector' = 'filesystem', 'path' = 'paid.jsonl', 'format' = 'json');
CREATE TABLE unpaid (oid BIGINT, cust STRING)
WITH ('connector' = 'filesystem', 'path' = 'unpaid.jsonl', 'format' = 'json');
CREATE TABLE totals (cust STRING, orders BIGINT, paid DECIMAL(38, 2), window_start TIMESTAMP(3))
WITH ('connector' = 'filesystem', 'path' = 'totals.jsonl', 'format' = 'json');
CREATE TABLE payers (oid BIGINT)
WITH ('connector' = 'filesystem', 'path' = 'payers.jsonl', 'format' = 'json');

CREATE VIEW o AS SELECT * FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '10' MINUTES));
CREATE VIEW p AS SELECT * FROM TABLE(TUMBLE(TABLE payments, DESCRIPTOR(ts), INTERVAL '10' MINUTES));

SET 'parallelism.default' = '2';
EXECUTE STATEMENT SET
BEGIN
  INSERT INTO matched
  SELECT o.oid, o.cust, o.amount, p.cust, p.paid,
         COALESCE(o.window_start, p.window_start), COALESCE(o.window_end, p.window_end)
  FROM o FULL JOIN p
    ON o.window_start = p.window_start AND o.window_end = p.window_end AND o.cust = p.cust;

  INSERT INTO paid
  SELECT oid, window_start FROM o
  WHERE cust IN (SELECT cust FROM p WHERE o.window_start = p.window_start AND o.window_end = p.window_end);

  INSERT INTO unpaid
  SELECT oid, cust FROM o
  WHERE NOT EXISTS (SELECT * FROM p
                    WHERE o.window_start = p.window_start AND o.window_end = p.window_end AND o.cust = p.cust);

  -- Window aggregations joined by window and key.
  INSERT INTO totals
  SELECT a.cust, a.n, b.total, a.window_start
  FROM (SELECT cust, window_start, window_end, COUNT(*) AS n FROM o GROUP BY cust, window_start, window_end) a
  LEFT JOIN (SELECT cust, window_start, window_end, SUM(paid) AS total FROM p GROUP BY cust, window_start, window_end) b
    ON a.window_start = b.window_start AND a.window_end = b.window_end AND a.cust = b.cust;

  INSERT INTO payers
  SELECT oid FROM orders WHERE cust IN (SELECT cust FROM payments WHERE paid > 2);
END;
