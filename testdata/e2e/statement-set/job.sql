-- A statement set: one job, one read of bids, two sinks.
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

CREATE TABLE big (
  bidtime TIMESTAMP(3),
  item STRING,
  price DECIMAL(10, 2)
) WITH (
  'connector' = 'filesystem',
  'path' = 'big.jsonl',
  'format' = 'json'
);

CREATE TABLE small (
  item STRING,
  supplier_id STRING
) WITH (
  'connector' = 'filesystem',
  'path' = 'small.jsonl',
  'format' = 'json'
);

EXECUTE STATEMENT SET
BEGIN
  INSERT INTO big SELECT bidtime, item, price FROM bids WHERE price >= 4;
  INSERT INTO small SELECT item, supplier_id FROM bids WHERE price < 4;
END;
