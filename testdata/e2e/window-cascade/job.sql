-- Cascaded window aggregations: a GROUP BY of the window_start and
-- window_end of a window aggregation's rows is a window aggregation of
-- the same windows (append-only: every sink here is), and a window join
-- of two such results is a window join (Nexmark q5's shape).
--   per supplier, HOP windows of 10 minutes by 5:
--   [08:00, 08:10) s1 2 bids 6.00, s2 1 5.00
--   [08:05, 08:15) s1 3 7.00, s2 2 8.00
--   [08:10, 08:20) s1 1 1.00, s2 2 9.00
--   [08:15, 08:25) s1 1 2.00, s2 1 6.00, s3 1 7.00
--   [08:20, 08:30) s1 1 2.00, s3 1 7.00
CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');

CREATE VIEW per_supplier AS
SELECT supplier_id, COUNT(*) AS cnt, SUM(price) AS total,
       window_start AS ws, window_end AS we, window_time AS wt
FROM TABLE(HOP(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES, INTERVAL '10' MINUTES))
GROUP BY supplier_id, window_start, window_end, window_time;

CREATE TABLE top (ws TIMESTAMP(3), we TIMESTAMP(3), suppliers BIGINT, top DECIMAL(38, 2))
WITH ('connector' = 'filesystem', 'path' = 'top.jsonl', 'format' = 'json');
CREATE TABLE hot (ws TIMESTAMP(3), supplier_id STRING, cnt BIGINT)
WITH ('connector' = 'filesystem', 'path' = 'hot.jsonl', 'format' = 'json');
CREATE TABLE windows (ws TIMESTAMP(3), we TIMESTAMP(3))
WITH ('connector' = 'filesystem', 'path' = 'windows.jsonl', 'format' = 'json');
CREATE TABLE hourly (hour_start TIMESTAMP(3), windows BIGINT, suppliers BIGINT)
WITH ('connector' = 'filesystem', 'path' = 'hourly.jsonl', 'format' = 'json');

CREATE VIEW per_window AS
SELECT ws, we, wt, COUNT(*) AS suppliers FROM per_supplier GROUP BY ws, we, wt;

SET 'parallelism.default' = '2';
EXECUTE STATEMENT SET
BEGIN
  INSERT INTO top
  SELECT ws, we, COUNT(*), MAX(total) FROM per_supplier GROUP BY ws, we;

  -- The suppliers with the most bids of each window (ties all).
  INSERT INTO hot
  SELECT a.ws, a.supplier_id, a.cnt
  FROM per_supplier a
  JOIN (SELECT ws, we, MAX(cnt) AS maxn FROM per_supplier GROUP BY ws, we) b
    ON a.ws = b.ws AND a.we = b.we AND a.cnt >= b.maxn;

  INSERT INTO windows SELECT DISTINCT ws, we FROM per_supplier;

  -- A third level: the window_time of the second is a time attribute.
  INSERT INTO hourly
  SELECT window_start, COUNT(*), SUM(suppliers)
  FROM TABLE(TUMBLE(TABLE per_window, DESCRIPTOR(wt), INTERVAL '1' HOUR))
  GROUP BY window_start, window_end;
END;
