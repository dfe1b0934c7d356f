-- The lookup-join case with the dimension table spilled to memory-mapped
-- files (the args file: --dimension-spill-dir spill): the same rows, and
-- the job's summary counts the lookups.
CREATE TABLE events (
  id INT,
  site STRING,
  device INT,
  reading DOUBLE,
  pt AS PROCTIME()
) WITH (
  'connector' = 'filesystem',
  'path' = 'events.jsonl',
  'format' = 'json'
);

CREATE TABLE devices (
  site STRING,
  device BIGINT,
  model STRING,
  max_reading DOUBLE
) WITH (
  'connector' = 'filesystem',
  'path' = 'devices.csv',
  'format' = 'csv',
  'lookup.full-cache.reload-interval' = '10 min'
);

CREATE TABLE enriched (
  id INT,
  model STRING,
  alarm BOOLEAN
) WITH (
  'connector' = 'filesystem',
  'path' = 'enriched.jsonl',
  'format' = 'json'
);

INSERT INTO enriched
SELECT e.id, d.model, e.reading > d.max_reading
FROM events AS e
LEFT JOIN devices FOR SYSTEM_TIME AS OF e.pt AS d
  ON e.site = d.site AND e.device = d.device;
