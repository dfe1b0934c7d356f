-- A ruleset whose alerts are suppressed per key set (SUPPRESS BY): its
-- state is, per key set, the interval open and the alerts suppressed
-- since the last one let through. Key sets include the Kafka partition,
-- so that each is read in one order, the input's, and the output is a
-- function of the input whatever the interleaving of the partitions.
SET 'pipeline.name' = 'insert-into-${SINK}';

CREATE TABLE events_p (
  id BIGINT,
  ts TIMESTAMP(3),
  k STRING,
  v BIGINT,
  part INT METADATA FROM 'partition' VIRTUAL,
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH (
  'connector' = 'kafka',
  'topic' = 'events',
  'properties.bootstrap.servers' = '${BOOTSTRAP}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE RULESET sup ON events_p SUPPRESS BY (part, k) FOR INTERVAL '1' MINUTE (
  RULE high WHEN v >= 90,
  RULE low_odd WHEN v < 10 AND MOD(v, 2) = 1
);

CREATE TABLE ${SINK} (id BIGINT, part INT, k STRING, v BIGINT, n BIGINT) WITH ('connector' = 'kafka', 'topic' = '${TOPIC}',
  'properties.bootstrap.servers' = '${BOOTSTRAP}', 'format' = 'json',
  'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = '${SINK}');

INSERT INTO ${SINK} SELECT id, part, k, v, suppressed_count FROM sup;
