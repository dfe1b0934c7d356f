CREATE TABLE cdc (id INT, k STRING, v BIGINT)
WITH ('connector' = 'kafka', 'topic' = 'cdc', 'format' = 'maxwell-json',
      'properties.bootstrap.servers' = '127.0.0.1:9092');

CREATE TABLE copy (id INT, k STRING, v BIGINT)
WITH ('connector' = 'filesystem', 'path' = 'copy.jsonl', 'format' = 'json');

-- A changelog read as is is updating: an append-only sink is refused.
INSERT INTO copy SELECT * FROM cdc;
