CREATE TABLE bids (price DECIMAL(10, 2), item STRING, supplier_id STRING) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');

-- Flink: Column 'x' is ambiguous.
SELECT x FROM (SELECT item AS x, supplier_id AS x FROM bids);
