-- Orders enriched with their customer: an INNER JOIN of two bounded files
-- on the customer ID, with a further condition on the customer. Orders
-- without a customer (unknown, a NULL key, or below tier 2) are left out.
-- An inner join of append-only inputs is append-only, so a file can take
-- it.
CREATE TABLE orders (oid BIGINT, cust STRING, amount DECIMAL(10, 2)) WITH (
  'connector' = 'filesystem', 'path' = 'orders.jsonl', 'format' = 'json');
CREATE TABLE custs (cid STRING, name STRING, tier INT) WITH (
  'connector' = 'filesystem', 'path' = 'custs.jsonl', 'format' = 'json');
CREATE TABLE enriched (oid BIGINT, name STRING, amount DECIMAL(10, 2)) WITH (
  'connector' = 'filesystem', 'path' = 'enriched.jsonl', 'format' = 'json');

SET 'parallelism.default' = '2';
INSERT INTO enriched
SELECT o.oid, c.name, o.amount
FROM orders AS o JOIN custs AS c ON o.cust = c.cid AND c.tier >= 2;
