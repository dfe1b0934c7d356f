CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');

-- Window Top-N over a window TVF: the 3 highest bids of each 10-minute
-- window, emitted once when the window closes (append-only).
SELECT * FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY price DESC) AS rownum
  FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
) WHERE rownum <= 3;

-- Per supplier, over HOP windows, with a filter below and above; the number
-- is not selected.
SELECT window_start, window_end, supplier_id, item, price FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, supplier_id ORDER BY price DESC, item) AS rn
  FROM TABLE(HOP(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES, INTERVAL '10' MINUTES))
  WHERE item <> 'X'
) WHERE rn < 3 AND price > 1;
