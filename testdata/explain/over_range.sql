-- OVER aggregation with a RANGE frame of one minute (rows at the same
-- time are peers), writing to an append-only sink.
CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');
CREATE TABLE out (item STRING, bidtime TIMESTAMP(3), n BIGINT, lo DECIMAL(10, 2)) WITH ('connector' = 'filesystem', 'path' = 'out.jsonl', 'format' = 'json');

INSERT INTO out
SELECT item, bidtime,
  COUNT(*) OVER (PARTITION BY item ORDER BY bidtime RANGE BETWEEN INTERVAL '1' MINUTE PRECEDING AND CURRENT ROW),
  MIN(price) OVER (PARTITION BY item ORDER BY bidtime RANGE BETWEEN INTERVAL '1' MINUTE PRECEDING AND CURRENT ROW)
FROM bids;
