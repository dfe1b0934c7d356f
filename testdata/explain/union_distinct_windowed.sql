CREATE TABLE w1 (ts TIMESTAMP(3), s STRING, WATERMARK FOR ts AS ts) WITH ('connector' = 'filesystem', 'path' = 'w1.jsonl', 'format' = 'json');
CREATE TABLE w2 (ts TIMESTAMP(3), s STRING, WATERMARK FOR ts AS ts) WITH ('connector' = 'filesystem', 'path' = 'w2.jsonl', 'format' = 'json');
-- UNION of windowed rows: one distinct aggregate over both inputs, keyed by
-- the window bounds with the other columns.
SELECT window_start, window_end, s FROM TABLE(TUMBLE(TABLE w1, DESCRIPTOR(ts), INTERVAL '10' MINUTES))
UNION SELECT window_start, window_end, s FROM TABLE(TUMBLE(TABLE w2, DESCRIPTOR(ts), INTERVAL '10' MINUTES));
