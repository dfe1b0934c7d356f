CREATE TABLE bids (price DECIMAL(10, 2), item STRING, supplier_id STRING) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');

-- Flink: ORDER BY expression "price" is not in the select clause.
SELECT DISTINCT item FROM bids ORDER BY price;
