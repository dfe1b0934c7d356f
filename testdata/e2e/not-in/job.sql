-- NOT IN with SQL's three-valued logic, as Flink runs it (a null-aware
-- ANTI join): `cust NOT IN (subquery)` is false when the subquery has
-- cust, and unknown (the order is left out) when cust is NULL or the
-- subquery has a NULL.
--
-- active_totals: the blocked customers that are active are bob and dan:
-- ann's and cy's orders remain; the order without a customer does not
-- (its NOT IN is unknown). all_totals: the blocked list has a NULL, so
-- NOT IN is never true and no order remains. PostgreSQL gives the same.
--
-- The ANTI join retracts an order when a match arrives after it; the
-- mini-batch holds the totals' updates until the end of the input, so
-- that the files get the final rows only, whatever the order the two
-- files were read in.
SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.allow-latency' = '1 h';
SET 'parallelism.default' = '2';

CREATE TABLE orders (oid BIGINT, cust STRING, amount DECIMAL(10, 2)) WITH (
  'connector' = 'filesystem', 'path' = 'orders.jsonl', 'format' = 'json');
CREATE TABLE blocked (cid STRING, active BOOLEAN) WITH (
  'connector' = 'filesystem', 'path' = 'blocked.jsonl', 'format' = 'json');

CREATE TABLE active_totals (cust STRING, n BIGINT, total DECIMAL(38, 2)) WITH (
  'connector' = 'filesystem', 'path' = 'active_totals.jsonl', 'format' = 'debezium-json');
CREATE TABLE all_totals (cust STRING, n BIGINT, total DECIMAL(38, 2)) WITH (
  'connector' = 'filesystem', 'path' = 'all_totals.jsonl', 'format' = 'debezium-json');

EXECUTE STATEMENT SET
BEGIN
  INSERT INTO active_totals
  SELECT cust, COUNT(*), SUM(amount) FROM orders
  WHERE cust NOT IN (SELECT cid FROM blocked WHERE active)
  GROUP BY cust;
  INSERT INTO all_totals
  SELECT cust, COUNT(*), SUM(amount) FROM orders
  WHERE cust NOT IN (SELECT cid FROM blocked)
  GROUP BY cust;
END;
