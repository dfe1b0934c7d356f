-- A directory source: one partition per file. part-0.jsonl runs ahead to
-- 08:31 while part-1.jsonl is still at 08:07..08:13; the watermark is the
-- minimum over the partitions, so none of part-1's rows is late.
CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '1' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = 'bids',
  'format' = 'json'
);

CREATE TABLE totals (
  window_start TIMESTAMP(3),
  window_end TIMESTAMP(3),
  bids BIGINT,
  total DECIMAL(38, 2)
) WITH (
  'connector' = 'filesystem',
  'path' = 'totals.jsonl',
  'format' = 'json'
);

INSERT INTO totals
SELECT window_start, window_end, COUNT(*), SUM(price)
FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
GROUP BY window_start, window_end;
