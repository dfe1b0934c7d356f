-- Under the default 'table.exec.sink.type-length-enforcer' (IGNORE), no
-- length is enforced and no ConstraintEnforcer is planned without NOT NULL
-- columns; the values keep the lengths the query gave them.
CREATE TABLE src (id INT, name STRING) WITH ('connector' = 'filesystem', 'path' = 'in.jsonl', 'format' = 'json');
CREATE TABLE dst (code CHAR(3), name VARCHAR(5), v VARCHAR) WITH ('connector' = 'print');
INSERT INTO dst SELECT name, UPPER(name), CAST(name AS VARCHAR(2)) FROM src;
