CREATE TABLE bids (price DECIMAL(10, 2), item STRING, supplier_id STRING) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');

-- Flink: Column has duplicate column name 'x' and no column list specified.
WITH c AS (SELECT item AS x, price AS x FROM bids) SELECT * FROM c;
