CREATE TABLE prices (k STRING, cat STRING, v INT, PRIMARY KEY (k) NOT ENFORCED) WITH (
  'connector' = 'upsert-kafka', 'topic' = 'prices', 'properties.bootstrap.servers' = '127.0.0.1:9092',
  'key.format' = 'json', 'value.format' = 'json');

-- An upsert-kafka table is an upsert stream keyed by its primary key: a
-- ChangelogNormalize keeps each key's last row, so that the GROUP BY sees
-- a replaced row retracted before its successor.
SELECT cat, SUM(v) AS total FROM prices GROUP BY cat;
