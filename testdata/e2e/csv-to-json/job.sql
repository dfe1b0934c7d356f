-- CSV in, JSON out, with a computed column.
CREATE TABLE orders (
  id INT,
  item STRING,
  price DECIMAL(10, 2),
  qty INT,
  dp AS price * 2
) WITH (
  'connector' = 'filesystem',
  'path' = 'orders.csv',
  'format' = 'csv'
);

CREATE TABLE priced (
  id INT,
  item STRING,
  price DECIMAL(10, 2),
  double_price DECIMAL(20, 2),
  total DECIMAL(20, 2)
) WITH (
  'connector' = 'filesystem',
  'path' = 'priced.jsonl',
  'format' = 'json'
);

INSERT INTO priced
SELECT id, item, price, dp, price * qty
FROM orders;
