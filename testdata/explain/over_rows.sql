-- OVER aggregation with a ROWS frame, through a named window: calls that
-- share the window (named or spelled out) go into one OverAggregate;
-- computed arguments come from a projection below it.
CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');

SELECT item, bidtime, price,
  SUM(price) OVER w AS total,
  COUNT(*) OVER w AS n,
  MAX(price * 2) OVER w AS top2,
  AVG(price) OVER (PARTITION BY item ORDER BY bidtime ROWS 100 PRECEDING) AS mean
FROM bids
WHERE price > 1
WINDOW w AS (PARTITION BY item ORDER BY bidtime ROWS BETWEEN 100 PRECEDING AND CURRENT ROW);
