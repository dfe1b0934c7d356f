-- A named window refined with a frame (OVER (w ROWS ...)) and the same
-- window spelled out: one window, one OverAggregate.
CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');

SELECT item, MIN(price) OVER (w ROWS 2 PRECEDING) AS lo,
  MAX(price) OVER (PARTITION BY item ORDER BY bidtime ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS hi
FROM bids
WINDOW w AS (PARTITION BY item ORDER BY bidtime);
