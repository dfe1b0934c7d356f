CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');

-- Window deduplication: the first bid of each supplier in each window
-- (ORDER BY the time attribute ASC, rn = 1: the number is 1 in every row).
SELECT * FROM (
  SELECT bidtime, price, item, supplier_id, window_start, window_end,
    ROW_NUMBER() OVER (PARTITION BY window_start, window_end, supplier_id ORDER BY bidtime ASC) AS rn
  FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
) WHERE rn = 1;

-- The last one (DESC), over CUMULATE windows, partitioned by window_end
-- alone, which identifies a window of a TVF.
SELECT bidtime, price, item, window_end FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_end, item ORDER BY bidtime DESC) AS rn
  FROM TABLE(CUMULATE(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '2' MINUTES, INTERVAL '10' MINUTES))
) WHERE rn <= 1;

-- Ordered by something else than a time attribute, or with RANK, it is a
-- window Top-1, not a deduplication.
SELECT * FROM (
  SELECT *, RANK() OVER (PARTITION BY window_start, window_end ORDER BY bidtime) AS rn
  FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
) WHERE rn = 1;
