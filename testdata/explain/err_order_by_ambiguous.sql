CREATE TABLE bids (price DECIMAL(10, 2), item STRING, supplier_id STRING) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');

-- Flink: Column 'x' is ambiguous (the select list's own names come first).
SELECT item AS x, supplier_id AS x FROM bids ORDER BY x;
