CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');
CREATE TABLE out_print (a STRING) WITH ('connector' = 'print');

SELECT window_start, window_end, SUM(price) FROM TABLE(
  CUMULATE(DATA => TABLE bids, TIMECOL => DESCRIPTOR(bidtime), STEP => INTERVAL '2' MINUTES, SIZE => INTERVAL '10' MINUTES))
GROUP BY window_start, window_end;
