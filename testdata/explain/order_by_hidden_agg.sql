CREATE TABLE bids (price DECIMAL(10, 2), item STRING, supplier_id STRING) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');

-- ORDER BY an aggregate that the select list leaves out.
SELECT item FROM bids GROUP BY item ORDER BY COUNT(*) DESC, item;
