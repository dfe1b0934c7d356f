CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');

-- One grouping set is a plain GROUP BY: no Expand, GROUPING() is 0.
SELECT item, GROUPING(item), COUNT(*) FROM bids GROUP BY GROUPING SETS ((item));
