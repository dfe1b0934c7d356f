-- A metric group keyed by the input's partition (so that each key's rows
-- come in one order, the partition's, and its values are known), with
-- metrics over every row, a LAST frame and a tumbling window, into an
-- exactly-once Kafka sink (every fourth row): the group's state is per
-- key accumulators, frames and windows, restored from Kafka after a kill.
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

CREATE METRIC GROUP part_metrics ON events_p KEY BY (part) (
  METRIC n       AS COUNT(*),
  METRIC sum_1s  AS SUM(v) WINDOW LAST(INTERVAL '1' SECOND),
  METRIC max_10s AS MAX(v) WINDOW TUMBLE(INTERVAL '10' SECOND)
);

CREATE TABLE ${SINK} (
  id BIGINT,
  part INT,
  n BIGINT,
  sum_1s BIGINT,
  max_10s BIGINT
) WITH (
  'connector' = 'kafka',
  'topic' = '${TOPIC}',
  'properties.bootstrap.servers' = '${BOOTSTRAP}',
  'format' = 'json',
  'sink.delivery-guarantee' = 'exactly-once',
  'sink.transactional-id-prefix' = '${SINK}'
);

INSERT INTO ${SINK}
SELECT id, part, n, sum_1s, max_10s FROM part_metrics WHERE MOD(id, 4) = 0;
