-- A stateless filter and projection into an exactly-once Kafka sink: only
-- the sources' positions are state. The job's name, and so its
-- transactional ID, come from the sink table ${SINK}; it writes topic
-- ${TOPIC}.
CREATE TABLE ${SINK} (
  id BIGINT,
  ts TIMESTAMP(3),
  k STRING,
  w BIGINT
) WITH (
  'connector' = 'kafka',
  'topic' = '${TOPIC}',
  'properties.bootstrap.servers' = '${BOOTSTRAP}',
  'format' = 'json',
  'sink.delivery-guarantee' = 'exactly-once',
  'sink.transactional-id-prefix' = '${SINK}'
);

INSERT INTO ${SINK}
SELECT id, ts, UPPER(k), v * 10 + 1
FROM events
WHERE MOD(v, 3) = 0;
