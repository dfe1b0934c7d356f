-- The output of an OVER aggregation keeps its time attribute: it feeds a
-- window.
CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');
CREATE VIEW running AS
  SELECT bidtime, item, SUM(price) OVER (PARTITION BY item ORDER BY bidtime ROWS 2 PRECEDING) AS s FROM bids;

SELECT window_start, window_end, MAX(s) AS top
FROM TABLE(TUMBLE(TABLE running, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
GROUP BY window_start, window_end;
