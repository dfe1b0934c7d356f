-- A non-windowed GROUP BY: an updating result into an exactly-once
-- upsert-kafka sink, keyed by k. The job's name, and so its state and
-- transactional ID, come from the sink table ${SINK}; it writes topic
-- ${TOPIC}.
CREATE TABLE ${SINK} (
  k STRING,
  n BIGINT,
  total BIGINT,
  hi BIGINT,
  PRIMARY KEY (k) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = '${TOPIC}',
  'properties.bootstrap.servers' = '${BOOTSTRAP}',
  'key.format' = 'json',
  'value.format' = 'json',
  'sink.delivery-guarantee' = 'exactly-once',
  'sink.transactional-id-prefix' = '${SINK}'
);

INSERT INTO ${SINK}
SELECT k, COUNT(*), SUM(v), MAX(v)
FROM events
GROUP BY k;
