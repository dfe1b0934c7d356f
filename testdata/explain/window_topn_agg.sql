CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');

CREATE TABLE top_suppliers (
  window_start TIMESTAMP(3), window_end TIMESTAMP(3), supplier_id STRING,
  price DECIMAL(38, 2), cnt BIGINT, rownum BIGINT
) WITH ('connector' = 'filesystem', 'path' = 'out.jsonl', 'format' = 'json');

-- Window Top-N after a window aggregation (Flink's documentation example):
-- the top 3 suppliers by sales in each 10-minute window. The sink only
-- appends: the plan is append-only.
INSERT INTO top_suppliers
SELECT window_start, window_end, supplier_id, price, cnt, rownum FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY price DESC) AS rownum
  FROM (
    SELECT window_start, window_end, supplier_id, SUM(price) AS price, COUNT(*) AS cnt
    FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
    GROUP BY window_start, window_end, supplier_id
  )
) WHERE rownum <= 3;
