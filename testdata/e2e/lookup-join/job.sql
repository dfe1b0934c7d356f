-- A stream of events enriched from a CSV dimension file by a lookup join:
-- the device registry is loaded once and looked up by (site, device); a
-- LEFT join keeps the events of unknown devices, padded with NULLs, and
-- an event with a NULL key never matches.
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
