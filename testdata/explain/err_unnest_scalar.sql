CREATE TABLE t (id INT, tag STRING) WITH ('connector' = 'filesystem', 'path' = 't.jsonl', 'format' = 'json');

SELECT * FROM t CROSS JOIN UNNEST(t.tag) AS u(x);
