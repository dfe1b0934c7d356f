CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');

CREATE TABLE firsts (ws TIMESTAMP(3), top BIGINT) WITH ('connector' = 'filesystem', 'path' = 'firsts.jsonl', 'format' = 'json');

-- A GROUP BY of window_start alone of windowed rows is no window
-- aggregation (Flink's neither): it updates its rows, which an
-- append-only sink refuses.
INSERT INTO firsts
SELECT ws, MAX(cnt) FROM (
  SELECT item, window_start AS ws, window_end AS we, COUNT(*) AS cnt
  FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
  GROUP BY item, window_start, window_end
) GROUP BY ws;
