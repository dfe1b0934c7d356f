-- RANK() over window TVF rows partitioned by the window is a window Top-N
-- only when the enclosing query bounds the number; without a bound it is
-- refused, as for the updating Top-N.
CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '5' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = 'bids.jsonl',
  'format' = 'json'
);
CREATE TABLE ranked (item STRING, r BIGINT) WITH ('connector' = 'print');

INSERT INTO ranked
SELECT item, RANK() OVER (PARTITION BY window_start, window_end ORDER BY price DESC)
FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES));
