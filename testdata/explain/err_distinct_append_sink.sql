-- SELECT DISTINCT over an unbounded input updates its result: the error
-- names the GroupAggregate and points at the DISTINCT.
CREATE TABLE clicks (user_id STRING, url STRING) WITH ('connector' = 'filesystem', 'path' = 'clicks.jsonl', 'format' = 'json');
CREATE TABLE out (user_id STRING) WITH ('connector' = 'filesystem', 'path' = 'out.jsonl', 'format' = 'json');

INSERT INTO out
SELECT DISTINCT user_id FROM clicks;
