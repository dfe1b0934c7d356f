CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');

-- What stays an updating GROUP BY, as in Flink: one bound only, and the
-- bounds of a processing-time window aggregation (Flink attaches
-- event-time windows only).
CREATE VIEW per_item AS
SELECT item, window_start AS ws, window_end AS we, COUNT(*) AS cnt
FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
GROUP BY item, window_start, window_end;
SELECT ws, MAX(cnt) FROM per_item GROUP BY ws;

CREATE VIEW b AS SELECT *, PROCTIME() AS pt FROM bids;
SELECT ws, we, MAX(cnt) FROM (
  SELECT item, window_start AS ws, window_end AS we, COUNT(*) AS cnt
  FROM TABLE(TUMBLE(TABLE b, DESCRIPTOR(pt), INTERVAL '10' MINUTES))
  GROUP BY item, window_start, window_end
) GROUP BY ws, we;
