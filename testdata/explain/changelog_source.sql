CREATE TABLE cdc (id INT, k STRING, v BIGINT)
WITH ('connector' = 'filesystem', 'path' = 'changes.jsonl', 'format' = 'debezium-json');

CREATE TABLE totals (k STRING, total BIGINT, PRIMARY KEY (k) NOT ENFORCED)
WITH ('connector' = 'filesystem', 'path' = 'totals.jsonl', 'format' = 'debezium-json');

-- A changelog source: its scan is updating, so the aggregate retracts
-- what updates and deletes take away, and the sink takes updates.
INSERT INTO totals SELECT k, SUM(v) FROM cdc WHERE v > 0 GROUP BY k;
