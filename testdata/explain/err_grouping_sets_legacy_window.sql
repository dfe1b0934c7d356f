CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');

-- Flink: GROUPING SETS are currently not supported with a group window.
SELECT item, COUNT(*) FROM bids
GROUP BY TUMBLE(bidtime, INTERVAL '10' MINUTE), ROLLUP (item);
