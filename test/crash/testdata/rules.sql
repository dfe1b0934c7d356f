-- A rule set: a statement set of filter rules over the events, evaluated
-- together (shared filters and their cache), each into an exactly-once
-- Kafka sink of its own; all write topic ${TOPIC}, each row tagged with
-- its rule. Only the sources' positions are state. The job is named as
-- an INSERT into ${SINK} would be, for the test's changelog watcher.
SET 'pipeline.name' = 'insert-into-${SINK}';

CREATE TABLE ${SINK}_a (rule STRING, id BIGINT, k STRING, v BIGINT) WITH ('connector' = 'kafka', 'topic' = '${TOPIC}',
  'properties.bootstrap.servers' = '${BOOTSTRAP}', 'format' = 'json',
  'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = '${SINK}-a');
CREATE TABLE ${SINK}_b (rule STRING, id BIGINT, k STRING, v BIGINT) WITH ('connector' = 'kafka', 'topic' = '${TOPIC}',
  'properties.bootstrap.servers' = '${BOOTSTRAP}', 'format' = 'json',
  'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = '${SINK}-b');
CREATE TABLE ${SINK}_c (rule STRING, id BIGINT, k STRING, v BIGINT) WITH ('connector' = 'kafka', 'topic' = '${TOPIC}',
  'properties.bootstrap.servers' = '${BOOTSTRAP}', 'format' = 'json',
  'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = '${SINK}-c');
CREATE TABLE ${SINK}_d (rule STRING, id BIGINT, k STRING, v BIGINT) WITH ('connector' = 'kafka', 'topic' = '${TOPIC}',
  'properties.bootstrap.servers' = '${BOOTSTRAP}', 'format' = 'json',
  'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = '${SINK}-d');
CREATE TABLE ${SINK}_e (rule STRING, id BIGINT, k STRING, v BIGINT) WITH ('connector' = 'kafka', 'topic' = '${TOPIC}',
  'properties.bootstrap.servers' = '${BOOTSTRAP}', 'format' = 'json',
  'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = '${SINK}-e');

EXECUTE STATEMENT SET BEGIN
INSERT INTO ${SINK}_a SELECT 'a', id, k, v FROM events WHERE k LIKE '%7%';
INSERT INTO ${SINK}_b SELECT 'b', id, k, v FROM events WHERE k IN ('k1', 'k22', 'k333', 'k400');
INSERT INTO ${SINK}_c SELECT 'c', id, k, v FROM events WHERE REGEXP(k, '^k[0-9]*3$') AND v >= 50;
INSERT INTO ${SINK}_d SELECT 'd', id, k, v FROM events WHERE v < 5 AND k LIKE 'k1%';
INSERT INTO ${SINK}_e SELECT 'e', id, k, v FROM events WHERE UPPER(k) = 'K42' OR v = 99;
END;
