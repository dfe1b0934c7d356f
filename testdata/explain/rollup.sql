CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');

-- ROLLUP (item, supplier_id) with GROUPING and GROUPING_ID, a CASE on $e.
-- MAX(item) reads item where the sets put NULL in the key: the Expand
-- copies it (item_0), as Flink's does; HAVING filters after the
-- aggregation.
SELECT item, supplier_id, GROUPING(item) AS gi, GROUPING_ID(item, supplier_id) AS gid,
  MAX(item), SUM(price) FILTER (WHERE supplier_id IS NOT NULL)
FROM bids
GROUP BY ROLLUP (item, supplier_id)
HAVING COUNT(*) > 1;
