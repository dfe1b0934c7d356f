CREATE TABLE a (k INT, x STRING) WITH ('connector' = 'filesystem', 'path' = 'a.jsonl', 'format' = 'json');
CREATE TABLE b (k INT, y STRING) WITH ('connector' = 'filesystem', 'path' = 'b.jsonl', 'format' = 'json');

-- A LEFT JOIN keeps every left row: a WHERE on the left side and an ON
-- condition on the right side move below the join; an ON condition on the
-- left side and a WHERE on the right side (which sees the NULL padding)
-- stay where they are.
SELECT a.x, b.y
FROM a LEFT JOIN b ON a.k = b.k AND b.y <> 'skip' AND a.x <> 'alone'
WHERE a.x > 'b' AND b.y IS NULL;
