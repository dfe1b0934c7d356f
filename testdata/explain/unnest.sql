CREATE TABLE orders (id INT, tags ARRAY<STRING>, items ARRAY<ROW<sku STRING, qty INT>>)
WITH ('connector' = 'filesystem', 'path' = 'orders.jsonl', 'format' = 'json');

-- An array of rows expands into the rows' fields; WITH ORDINALITY adds the
-- position; LEFT JOIN ... ON TRUE keeps the rows whose array is empty.
SELECT o.id, i.sku, i.qty * 2, i.pos
FROM orders AS o LEFT JOIN UNNEST(o.items) WITH ORDINALITY AS i(sku, qty, pos) ON TRUE
WHERE o.id > 0;
