-- Quickstart: generated bids, counted and summed per item in 5-second
-- tumbling windows, printed as they close. Runs with no files or services:
--   sluice run examples/quickstart.sql
-- It ends after 20,000 rows (about 10 seconds at 2,000 rows per second).

CREATE TABLE bids (
  item     STRING,
  price    DECIMAL(10, 2),
  bidtime  AS PROCTIME()
) WITH (
  'connector' = 'datagen',
  'rows-per-second' = '2000',
  'number-of-rows' = '20000',
  'fields.item.length' = '1',
  'fields.price.min' = '1',
  'fields.price.max' = '100'
);

CREATE TABLE per_item (
  window_start TIMESTAMP(3),
  window_end   TIMESTAMP(3),
  item         STRING,
  bids         BIGINT,
  total        DECIMAL(38, 2)
) WITH ('connector' = 'print');

INSERT INTO per_item
SELECT window_start, window_end, item, COUNT(*), SUM(price)
FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '5' SECONDS))
GROUP BY window_start, window_end, item;
