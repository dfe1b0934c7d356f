CREATE TABLE w1 (ts TIMESTAMP(3), s STRING, WATERMARK FOR ts AS ts) WITH ('connector' = 'filesystem', 'path' = 'w1.jsonl', 'format' = 'json');
CREATE TABLE w2 (ts TIMESTAMP(3), s STRING, WATERMARK FOR ts AS ts) WITH ('connector' = 'filesystem', 'path' = 'w2.jsonl', 'format' = 'json');
-- UNION's aggregate materializes its rows: ts is no longer a time
-- attribute, and the result is updating; it cannot be windowed.
CREATE VIEW u AS SELECT ts, s FROM w1 UNION SELECT ts, s FROM w2;
SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE u, DESCRIPTOR(ts), INTERVAL '10' MINUTES)) GROUP BY window_start, window_end;
