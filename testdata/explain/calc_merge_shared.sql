CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');
CREATE TABLE out_print (a STRING) WITH ('connector' = 'print');

-- The inner expression is used twice: deterministic, so the Calcs merge
-- and the merged Calc computes it once per row.
SELECT UPPER(x) AS a, LOWER(x) AS b FROM (SELECT CONCAT(item, supplier_id) AS x FROM bids WHERE price > 1);
