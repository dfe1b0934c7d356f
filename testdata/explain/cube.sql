CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');

-- CUBE crossed with a plain key and a ROLLUP: item is in every set, so
-- GROUPING(item) is 0. The cross product gives some sets more than once
-- ((item, supplier_id, price) three times); as in SQL, each copy gives its
-- own rows, kept apart by its own expand id (1 << 3, 2 << 3 added), and
-- GROUP_ID() tells the copies.
SELECT item, supplier_id, price, GROUPING(item), GROUP_ID(), COUNT(*)
FROM bids
GROUP BY item, CUBE (supplier_id, price), ROLLUP (supplier_id);
