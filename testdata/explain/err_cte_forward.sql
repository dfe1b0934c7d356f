CREATE TABLE bids (price DECIMAL(10, 2), item STRING) WITH ('connector' = 'filesystem', 'path' = 'bids.jsonl', 'format' = 'json');

-- A CTE does not see the ones declared after it (Flink: "Object 'c1' not found").
WITH c0 AS (SELECT * FROM c1),
     c1 AS (SELECT item FROM bids)
SELECT * FROM c0;
