CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');
CREATE TABLE out_print (a STRING) WITH ('connector' = 'print');

SELECT window_start, window_end, item, COUNT(*) AS n
FROM (SELECT * FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES)) WHERE price > 2)
GROUP BY window_start, window_end, item;
