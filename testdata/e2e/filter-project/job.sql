-- Filter and projection with scalar functions and NULLs.
-- Kept: price > 2 and a name starting with a lower-case 'a' (LIKE is
-- case-sensitive). Dropped: 3 (banana), 4 (price 1.50), 5 (NULL name),
-- 6 (NULL price), 7 (upper-case 'A'), 9 (price 2.00 is not > 2).
CREATE TABLE products (
  id INT,
  name STRING,
  price DECIMAL(10, 2),
  category STRING,
  qty INT
) WITH (
  'connector' = 'filesystem',
  'path' = 'products.jsonl',
  'format' = 'json'
);

CREATE TABLE picked (
  id INT,
  uname STRING,
  label STRING,
  qty_text STRING,
  band STRING,
  category STRING
) WITH (
  'connector' = 'filesystem',
  'path' = 'picked.jsonl',
  'format' = 'json'
);

INSERT INTO picked
SELECT
  id,
  UPPER(name),
  CONCAT(name, '-', category),
  CAST(qty AS STRING),
  CASE WHEN price > 10 THEN 'big' ELSE 'low' END,
  COALESCE(category, 'none')
FROM products
WHERE price > 2 AND name LIKE 'a%';
