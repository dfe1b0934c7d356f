CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');
CREATE TABLE out_print (a STRING) WITH ('connector' = 'print');

SELECT y + 1 AS a FROM (SELECT price * 2 AS y, item FROM bids WHERE price > 1) WHERE item <> 'x';
