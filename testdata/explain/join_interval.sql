CREATE TABLE imps (id BIGINT, ad STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'imps.jsonl', 'format' = 'json');
CREATE TABLE clicks (ad STRING, cts TIMESTAMP(3), WATERMARK FOR cts AS cts)
WITH ('connector' = 'filesystem', 'path' = 'clicks.jsonl', 'format' = 'json');

-- Event-time bounds between the two sides make an interval join; other
-- conditions stay in the join's condition.
SELECT i.id, c.cts
FROM imps i JOIN clicks c
  ON i.ad = c.ad AND c.cts >= i.ts AND c.cts < i.ts + INTERVAL '10' MINUTE AND i.id > 3;
