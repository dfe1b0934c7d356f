CREATE TABLE clicks (user_id STRING, url STRING, ts AS PROCTIME())
WITH ('connector' = 'datagen', 'number-of-rows' = '10');

-- Deduplication: the first click of each user by processing time is never
-- replaced, so the result is append-only.
SELECT user_id, url FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY ts ASC) AS rownum FROM clicks
) WHERE rownum = 1;
