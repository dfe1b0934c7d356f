-- The WHERE clauses of a statement set's queries over one table are
-- evaluated together: per column, its conditions (see exec/filterset).
CREATE TABLE events (host STRING, user_name STRING, image STRING, command_line STRING, pid BIGINT, integrity_level STRING)
WITH ('connector' = 'procgen', 'events.num' = '1000');
CREATE TABLE a1 (host STRING, command_line STRING) WITH ('connector' = 'blackhole');
CREATE TABLE a2 (host STRING, command_line STRING) WITH ('connector' = 'blackhole');
CREATE TABLE a3 (host STRING, command_line STRING) WITH ('connector' = 'blackhole');
CREATE TABLE a4 (host STRING, command_line STRING) WITH ('connector' = 'blackhole');
EXPLAIN STATEMENT SET BEGIN
INSERT INTO a1 SELECT host, command_line FROM events WHERE command_line LIKE '%powershell%';
INSERT INTO a2 SELECT host, command_line FROM events WHERE integrity_level = 'High' AND pid < 100;
INSERT INTO a3 SELECT host, command_line FROM events WHERE image LIKE '%\cmd.exe' AND command_line LIKE '%powershell%' AND host <> user_name;
INSERT INTO a4 SELECT host, command_line FROM events WHERE host = user_name OR pid > 5;
END;
