-- Session windows with a 5-minute gap, one session per item.
-- A: 08:00, 08:03, 08:07:30 chain into [08:00, 08:12:30); 08:13 starts a new one.
-- B: 08:02, 08:06:59 chain into [08:02, 08:11:59); 08:20 starts a new one.
CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '1' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = 'bids.jsonl',
  'format' = 'json'
);

CREATE TABLE sessions (
  item STRING,
  window_start TIMESTAMP(3),
  window_end TIMESTAMP(3),
  bids BIGINT,
  total DECIMAL(38, 2)
) WITH (
  'connector' = 'filesystem',
  'path' = 'sessions.jsonl',
  'format' = 'json'
);

INSERT INTO sessions
SELECT item, window_start, window_end, COUNT(*), SUM(price)
FROM TABLE(SESSION(TABLE bids PARTITION BY item, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES))
GROUP BY item, window_start, window_end;
