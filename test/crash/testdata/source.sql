-- Shared prelude of every crash-test job: the state, its checkpoints and
-- the input. ${BOOTSTRAP} is the broker the test starts.
--
-- The input topic is fully produced before any job starts, and every run
-- reads it from the earliest offset to the offset that was latest when the
-- run started, so every run ends by itself unless it is killed. A restarted
-- run resumes from the positions of the last committed checkpoint.
SET 'state.backend' = 'kafka';
SET 'state.kafka.bootstrap.servers' = '${BOOTSTRAP}';
SET 'execution.checkpointing.interval' = '${CHECKPOINT_INTERVAL}';
SET 'parallelism.default' = '${PARALLELISM}';

CREATE TABLE events (
  id BIGINT,
  ts TIMESTAMP(3),
  k STRING,
  v BIGINT,
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH (
  'connector' = 'kafka',
  'topic' = 'events',
  'properties.bootstrap.servers' = '${BOOTSTRAP}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);
