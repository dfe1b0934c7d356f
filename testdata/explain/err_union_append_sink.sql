-- UNION (without ALL) removes duplicates with an updating GroupAggregate:
-- the error points at the UNION.
CREATE TABLE a (x STRING) WITH ('connector' = 'filesystem', 'path' = 'a.jsonl', 'format' = 'json');
CREATE TABLE b (x STRING) WITH ('connector' = 'filesystem', 'path' = 'b.jsonl', 'format' = 'json');
CREATE TABLE out (x STRING) WITH ('connector' = 'filesystem', 'path' = 'out.jsonl', 'format' = 'json');

INSERT INTO out SELECT x FROM a UNION SELECT x FROM b;
