CREATE TABLE cdc (k STRING, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
WITH ('connector' = 'filesystem', 'path' = 'changes.jsonl', 'format' = 'maxwell-json');

SELECT TUMBLE_START(ts, INTERVAL '1' MINUTE), k, SUM(v)
FROM cdc GROUP BY TUMBLE(ts, INTERVAL '1' MINUTE), k;
