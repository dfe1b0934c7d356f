-- A tumbling-window aggregation into an exactly-once Kafka sink. The job's
-- name, and so its state and transactional ID, come from the sink table
-- ${SINK}; it writes topic ${TOPIC}.
CREATE TABLE ${SINK} (
  window_start TIMESTAMP(3),
  window_end TIMESTAMP(3),
  k STRING,
  n BIGINT,
  total BIGINT,
  lo BIGINT,
  hi BIGINT
) WITH (
  'connector' = 'kafka',
  'topic' = '${TOPIC}',
  'properties.bootstrap.servers' = '${BOOTSTRAP}',
  'format' = 'json',
  'sink.delivery-guarantee' = 'exactly-once',
  'sink.transactional-id-prefix' = '${SINK}'
);

INSERT INTO ${SINK}
SELECT window_start, window_end, k, COUNT(*), SUM(v), MIN(v), MAX(v)
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND))
GROUP BY window_start, window_end, k;
