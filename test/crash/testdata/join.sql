-- A regular join of two Kafka topics into an exactly-once Kafka sink: every
-- event is kept in the join's state, every payment finds its event (which
-- may come before or after it). The job's name, and so its state and
-- transactional ID, come from the sink table ${SINK}; it writes topic
-- ${TOPIC}.
CREATE TABLE payments (
  id BIGINT,
  amount BIGINT
) WITH (
  'connector' = 'kafka',
  'topic' = 'payments',
  'properties.bootstrap.servers' = '${BOOTSTRAP}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE ${SINK} (
  id BIGINT,
  k STRING,
  v BIGINT,
  amount BIGINT
) WITH (
  'connector' = 'kafka',
  'topic' = '${TOPIC}',
  'properties.bootstrap.servers' = '${BOOTSTRAP}',
  'format' = 'json',
  'sink.delivery-guarantee' = 'exactly-once',
  'sink.transactional-id-prefix' = '${SINK}'
);

INSERT INTO ${SINK}
SELECT e.id, e.k, e.v, p.amount
FROM events AS e JOIN payments AS p ON e.id = p.id;
