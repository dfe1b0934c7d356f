-- A filesystem sink PARTITIONED BY day and hour, as Flink writes it: a
-- directory per partition (dt=.../hr=...), part files inside, and a
-- success file in each partition once the watermark passes its end
-- (partition-time trigger, the partition's time taken from its values).
-- The partition columns are in the path, not in the files. A second
-- table is partitioned by a value that needs escaping in a path.
CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  supplier_id STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '1' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = 'bids.jsonl',
  'format' = 'json'
);

CREATE TABLE hourly (
  item STRING,
  price DECIMAL(10, 2),
  dt STRING,
  hr STRING
) PARTITIONED BY (dt, hr) WITH (
  'connector' = 'filesystem',
  'path' = 'hourly/',
  'format' = 'json',
  'sink.partition-commit.trigger' = 'partition-time',
  'partition.time-extractor.timestamp-pattern' = '$dt $hr:00:00',
  'sink.partition-commit.delay' = '1 h',
  'sink.partition-commit.policy.kind' = 'success-file'
);

CREATE TABLE by_item (
  supplier_id STRING,
  item STRING
) PARTITIONED BY (item) WITH (
  'connector' = 'filesystem',
  'path' = 'by_item/',
  'format' = 'csv'
);

EXECUTE STATEMENT SET
BEGIN
  INSERT INTO hourly
  SELECT item, price, DATE_FORMAT(bidtime, 'yyyy-MM-dd'), DATE_FORMAT(bidtime, 'HH') FROM bids;
  INSERT INTO by_item SELECT supplier_id, item FROM bids WHERE price > 3;
END;
