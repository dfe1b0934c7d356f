-- Every NOT NULL column of a sink is checked on the way in (Flink's ConstraintEnforcer).
CREATE TABLE src (id INT, name STRING) WITH ('connector' = 'filesystem', 'path' = 'in.jsonl', 'format' = 'json');
CREATE TABLE dst (id INT NOT NULL, name STRING NOT NULL, tag STRING) WITH ('connector' = 'print');
INSERT INTO dst SELECT id, name, 'x' FROM src WHERE id > 1;
