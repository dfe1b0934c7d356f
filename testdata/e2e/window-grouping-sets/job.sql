-- The GROUPING SETS and CUBE examples of Flink's Window Aggregation page
-- over its Bid table: per 10-minute window, per supplier and in total;
-- and per supplier and item, with every subset of the two.
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

CREATE TABLE by_supplier (
  window_start TIMESTAMP(3),
  window_end TIMESTAMP(3),
  supplier_id STRING,
  price DECIMAL(38, 2)
) WITH (
  'connector' = 'filesystem',
  'path' = 'by_supplier.jsonl',
  'format' = 'json'
);

CREATE TABLE cube (
  window_start TIMESTAMP(3),
  item STRING,
  supplier_id STRING,
  price DECIMAL(38, 2),
  g BIGINT
) WITH (
  'connector' = 'filesystem',
  'path' = 'cube.jsonl',
  'format' = 'json'
);

SET 'parallelism.default' = '2';

EXECUTE STATEMENT SET BEGIN
INSERT INTO by_supplier
SELECT window_start, window_end, supplier_id, SUM(price) AS price
  FROM TABLE(
    TUMBLE(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
  GROUP BY window_start, window_end, GROUPING SETS ((supplier_id), ());
INSERT INTO cube
SELECT window_start, item, supplier_id, SUM(price) AS price, GROUPING_ID(item, supplier_id)
  FROM TABLE(
    TUMBLE(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
  GROUP BY window_start, window_end, CUBE (supplier_id, item);
END;
