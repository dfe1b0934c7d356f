-- With 'table.exec.sink.type-length-enforcer' = 'TRIM_PAD', the sink's
-- CHAR(n)/VARCHAR(n) and BINARY(n)/VARBINARY(n) columns are cut and padded
-- on the way in (Flink's ConstraintEnforcer with its LengthEnforcers); a
-- STRING column has no length to enforce. The values are written as the
-- query computed them: no CAST to the columns' lengths.
SET 'table.exec.sink.type-length-enforcer' = 'TRIM_PAD';
CREATE TABLE src (id INT, name STRING, tag VARCHAR(10), b BYTES) WITH ('connector' = 'filesystem', 'path' = 'in.jsonl', 'format' = 'json');
CREATE TABLE dst (id INT NOT NULL, code CHAR(3), name VARCHAR(5), note STRING, b BINARY(2), vb VARBINARY(4))
WITH ('connector' = 'print');
INSERT INTO dst SELECT id, UPPER(name), tag, name, b, b FROM src;
