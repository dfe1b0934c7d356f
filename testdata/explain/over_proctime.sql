-- OVER aggregation by processing time, with the default frame (RANGE
-- BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) and no PARTITION BY.
CREATE TABLE clicks (user_id STRING, url STRING, ts AS PROCTIME())
WITH ('connector' = 'datagen', 'number-of-rows' = '10');

SELECT user_id, COUNT(*) OVER (ORDER BY ts) AS seen FROM clicks;
