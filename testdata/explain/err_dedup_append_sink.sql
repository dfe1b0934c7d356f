-- A deduplication that keeps the last row per key updates its result: the
-- error names the Rank operator and points at its ROW_NUMBER (Flink names
-- the node that produces the update changes).
CREATE TABLE clicks (user_id STRING, url STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
WITH ('connector' = 'filesystem', 'path' = 'clicks.jsonl', 'format' = 'json');
CREATE TABLE out (user_id STRING, url STRING) WITH ('connector' = 'filesystem', 'path' = 'out.jsonl', 'format' = 'json');

INSERT INTO out SELECT user_id, url FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY ts DESC) AS rownum FROM clicks
) WHERE rownum = 1;
