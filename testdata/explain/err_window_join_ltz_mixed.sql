-- A window join pairs windows of one kind: over a TIMESTAMP_LTZ time
-- attribute they are aligned in the session time zone, over a TIMESTAMP
-- one they are not, so the two cannot be joined.
CREATE TABLE a (k INT, ts BIGINT, t AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR t AS t)
WITH ('connector' = 'filesystem', 'path' = 'a.jsonl', 'format' = 'json');
CREATE TABLE b (k INT, t TIMESTAMP(3), WATERMARK FOR t AS t)
WITH ('connector' = 'filesystem', 'path' = 'b.jsonl', 'format' = 'json');
SELECT * FROM
  (SELECT * FROM TABLE(TUMBLE(TABLE a, DESCRIPTOR(t), INTERVAL '1' MINUTE))) l
  JOIN (SELECT * FROM TABLE(TUMBLE(TABLE b, DESCRIPTOR(t), INTERVAL '1' MINUTE))) r
  ON l.k = r.k AND l.window_start = r.window_start AND l.window_end = r.window_end;
