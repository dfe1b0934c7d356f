CREATE TABLE cdc (k STRING, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
WITH ('connector' = 'filesystem', 'path' = 'changes.jsonl', 'format' = 'canal-json');

-- Windows take append-only input, as in Flink: a changelog is refused.
SELECT window_start, k, SUM(v)
FROM TABLE(TUMBLE(TABLE cdc, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
GROUP BY window_start, window_end, k;
