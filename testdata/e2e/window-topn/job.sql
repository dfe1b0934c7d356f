-- Window Top-N, window deduplication, RANK and DENSE_RANK over 10-minute
-- tumbling windows. The test writes bids.jsonl (see e2eGenWindowTopN):
--   [08:00, 08:10)  08:01 A 4.00 s1, 08:02 B 5.00 s2, 08:03 C 4.00 s1,
--                   08:04 D 5.00 s1, 08:05 E 3.00 s2, 08:06 F 4.00 s2
--                   (ties at 5.00 and at 4.00)
--   [08:10, 08:20)  08:11 G 2.00 s1, 08:12 H 2.00 s2, 08:19 I 1.00 s1
--   [09:00, 09:10)  1100 bids Z of s3 from 09:00:00 every 0.5 s, priced
--                   0.00, 0.01, ... 10.99 (more than one read batch, so
--                   that the watermark passes 08:10 before what follows)
--   then 08:07 X 100.00 s1   late: its window has fired, dropped
--        09:05 J 20.00 s2    its window is still open
--        09:15 K 7.00 s1
CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');

CREATE VIEW windowed AS
SELECT * FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES));

CREATE TABLE top3 (window_start TIMESTAMP(3), item STRING, price DECIMAL(10, 2), rn BIGINT)
WITH ('connector' = 'filesystem', 'path' = 'top3.jsonl', 'format' = 'json');
CREATE TABLE ranked (window_start TIMESTAMP(3), item STRING, price DECIMAL(10, 2), r BIGINT)
WITH ('connector' = 'filesystem', 'path' = 'rank.jsonl', 'format' = 'json');
CREATE TABLE dense (window_start TIMESTAMP(3), item STRING, price DECIMAL(10, 2), r BIGINT)
WITH ('connector' = 'filesystem', 'path' = 'dense.jsonl', 'format' = 'json');
CREATE TABLE firsts (window_start TIMESTAMP(3), supplier_id STRING, item STRING, bidtime TIMESTAMP(3))
WITH ('connector' = 'filesystem', 'path' = 'first.jsonl', 'format' = 'json');
CREATE TABLE lasts (window_start TIMESTAMP(3), supplier_id STRING, item STRING, bidtime TIMESTAMP(3))
WITH ('connector' = 'filesystem', 'path' = 'last.jsonl', 'format' = 'json');
CREATE TABLE suppliers (window_start TIMESTAMP(3), supplier_id STRING, total DECIMAL(38, 2), bids BIGINT, rn BIGINT)
WITH ('connector' = 'filesystem', 'path' = 'suppliers.jsonl', 'format' = 'json');

-- ROW_NUMBER: ties are numbered in arrival order.
INSERT INTO top3
SELECT window_start, item, price, rn FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY price DESC) AS rn FROM windowed
) WHERE rn <= 3;

-- RANK: ties share a number, and the next number skips; more than 3 rows.
INSERT INTO ranked
SELECT window_start, item, price, r FROM (
  SELECT *, RANK() OVER (PARTITION BY window_start, window_end ORDER BY price DESC) AS r FROM windowed
) WHERE r <= 3;

-- DENSE_RANK: ties share a number, none is skipped.
INSERT INTO dense
SELECT window_start, item, price, r FROM (
  SELECT *, DENSE_RANK() OVER (PARTITION BY window_start, window_end ORDER BY price DESC) AS r FROM windowed
) WHERE r <= 2;

-- Window deduplication: the first and the last bid of each supplier.
INSERT INTO firsts
SELECT window_start, supplier_id, item, bidtime FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, supplier_id ORDER BY bidtime) AS rn FROM windowed
) WHERE rn = 1;

INSERT INTO lasts
SELECT window_start, supplier_id, item, bidtime FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_end, supplier_id ORDER BY bidtime DESC) AS rn FROM windowed
) WHERE rn = 1;

-- After a window aggregation: the two suppliers with the highest sales.
INSERT INTO suppliers
SELECT window_start, supplier_id, total, bids, rn FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY total DESC) AS rn
  FROM (
    SELECT window_start, window_end, supplier_id, SUM(price) AS total, COUNT(*) AS bids
    FROM windowed GROUP BY window_start, window_end, supplier_id
  )
) WHERE rn <= 2;
