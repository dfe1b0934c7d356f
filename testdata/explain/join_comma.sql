CREATE TABLE auction (id BIGINT, category BIGINT, ts TIMESTAMP(3), expires TIMESTAMP(3))
WITH ('connector' = 'filesystem', 'path' = 'auction.jsonl', 'format' = 'json');
CREATE TABLE bid (auction BIGINT, price BIGINT, ts TIMESTAMP(3))
WITH ('connector' = 'filesystem', 'path' = 'bid.jsonl', 'format' = 'json');

-- FROM a, b WHERE ... is an inner join on the WHERE condition: its
-- equalities are the keys, conditions on one side move below the join.
SELECT A.category, MAX(B.price) AS final
FROM auction A, bid B
WHERE A.id = B.auction AND B.ts BETWEEN A.ts AND A.expires AND A.category = 10
GROUP BY A.id, A.category;
