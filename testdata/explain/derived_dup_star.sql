CREATE TABLE bids (price DECIMAL(10, 2), item STRING, supplier_id STRING) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');

-- Two columns of a derived table share a name: * names the second x0 (as
-- Flink does), a reference to x is ambiguous.
SELECT * FROM (SELECT item AS x, supplier_id AS x FROM bids);
