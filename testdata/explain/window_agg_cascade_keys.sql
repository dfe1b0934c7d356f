CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');

-- Renamed bounds, another key, the inner window_time grouped too (it is
-- the outer window's window_time, a time attribute), and a window TVF
-- over the result: three levels of windows.
CREATE VIEW per_supplier AS
SELECT supplier_id, COUNT(*) AS cnt, window_start AS ws, window_end AS we, window_time AS wt
FROM TABLE(HOP(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES, INTERVAL '10' MINUTES))
GROUP BY supplier_id, window_start, window_end, window_time;
CREATE VIEW by_count AS
SELECT cnt, ws, we, wt, COUNT(*) AS suppliers FROM per_supplier GROUP BY cnt, ws, we, wt;
SELECT window_start, cnt, SUM(suppliers)
FROM TABLE(TUMBLE(TABLE by_count, DESCRIPTOR(wt), INTERVAL '1' HOUR))
GROUP BY cnt, window_start, window_end;
