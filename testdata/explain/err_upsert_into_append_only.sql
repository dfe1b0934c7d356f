-- An upsert-kafka table is read as an upsert stream: its rows update
-- earlier ones of the same key, which an append-only sink cannot take.
CREATE TABLE totals (k STRING, n BIGINT, PRIMARY KEY (k) NOT ENFORCED)
WITH ('connector' = 'upsert-kafka', 'topic' = 'totals', 'properties.bootstrap.servers' = '127.0.0.1:9092',
      'key.format' = 'json', 'value.format' = 'json');
CREATE TABLE copy (k STRING, n BIGINT) WITH ('connector' = 'filesystem', 'path' = 'copy.jsonl', 'format' = 'json');
INSERT INTO copy SELECT k, n FROM totals;
