-- A CHAR, VARCHAR, BINARY or VARBINARY length is between 1 and 2147483647.
CREATE TABLE t (v VARCHAR(0)) WITH ('connector' = 'print');
