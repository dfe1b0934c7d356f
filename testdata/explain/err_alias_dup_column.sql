CREATE TABLE bids (price DECIMAL(10, 2), item STRING, supplier_id STRING) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');

-- Flink: Duplicate name 'x' in column alias list.
SELECT * FROM (SELECT item, price FROM bids) AS s (x, x);
