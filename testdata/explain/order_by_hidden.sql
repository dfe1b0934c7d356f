CREATE TABLE bids (price DECIMAL(10, 2), item STRING, supplier_id STRING) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');

-- ORDER BY a column of the FROM clause that the select list leaves out, and
-- an expression over the select list (as Flink allows): sorted on hidden
-- columns, projected away after the sort.
SELECT item AS name FROM bids ORDER BY price DESC, UPPER(name), supplier_id LIMIT 3;
