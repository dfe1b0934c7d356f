CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');
CREATE TABLE out_print (a STRING) WITH ('connector' = 'print');

SELECT TUMBLE_START(bidtime, INTERVAL '10' MINUTE) AS wstart, item, MAX(price) FILTER (WHERE supplier_id <> 'x') AS top
FROM bids GROUP BY TUMBLE(bidtime, INTERVAL '10' MINUTE), item;
