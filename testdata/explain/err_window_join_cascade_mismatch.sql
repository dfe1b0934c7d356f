CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');

-- A window join of a cascaded window aggregation (of HOP windows) with
-- rows of TUMBLE windows is refused: the windows differ.
SELECT a.n, b.item
FROM (
  SELECT ws, we, COUNT(*) AS n FROM (
    SELECT item, window_start AS ws, window_end AS we, COUNT(*) AS cnt
    FROM TABLE(HOP(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES, INTERVAL '10' MINUTES))
    GROUP BY item, window_start, window_end
  ) GROUP BY ws, we
) a
JOIN TABLE(TUMBLE(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES)) b
  ON a.ws = b.window_start AND a.we = b.window_end;
