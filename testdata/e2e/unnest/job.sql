-- One row per item of each order: UNNEST expands an array of rows into
-- their fields, WITH ORDINALITY numbers them; LEFT JOIN ... ON TRUE keeps
-- the order whose item list is NULL; a NULL item gives NULL fields.
CREATE TABLE orders (id INT, tags ARRAY<STRING>, items ARRAY<ROW<sku STRING, qty INT>>) WITH (
  'connector' = 'filesystem', 'path' = 'orders.jsonl', 'format' = 'json');
CREATE TABLE lines (id INT, sku STRING, qty INT, pos INT) WITH (
  'connector' = 'filesystem', 'path' = 'lines.jsonl', 'format' = 'json');

INSERT INTO lines
SELECT o.id, i.sku, i.qty, i.pos
FROM orders AS o LEFT JOIN UNNEST(o.items) WITH ORDINALITY AS i(sku, qty, pos) ON TRUE;
