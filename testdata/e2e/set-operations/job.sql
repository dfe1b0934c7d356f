-- The set operations over the items of two shops (duplicates, NULL
-- colors). NULLs compare equal, as in SQL: ('ink', NULL) is in both.
-- UNION, INTERSECT and EXCEPT remove duplicates; INTERSECT ALL keeps a
-- row min(left, right) times, EXCEPT ALL left - right times. PostgreSQL
-- gives the same rows.
--
-- All but UNION ALL are updating (an EXCEPT retracts a row when the other
-- shop's copy arrives, whichever shop is read first), so the sinks take
-- a changelog. The mini-batch holds every aggregate's updates until the
-- end of the input: each file gets the final rows only, whatever the
-- order the two shops were read in.
SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.allow-latency' = '1 h';
SET 'parallelism.default' = '2';

CREATE TABLE shop_a (item STRING, color STRING) WITH (
  'connector' = 'filesystem', 'path' = 'shop_a.jsonl', 'format' = 'json');
CREATE TABLE shop_b (item STRING, color STRING) WITH (
  'connector' = 'filesystem', 'path' = 'shop_b.jsonl', 'format' = 'json');

CREATE TABLE in_either (item STRING, color STRING) WITH (
  'connector' = 'filesystem', 'path' = 'union.jsonl', 'format' = 'debezium-json');
CREATE TABLE in_both (item STRING, color STRING) WITH (
  'connector' = 'filesystem', 'path' = 'intersect.jsonl', 'format' = 'debezium-json');
CREATE TABLE only_a (item STRING, color STRING) WITH (
  'connector' = 'filesystem', 'path' = 'except.jsonl', 'format' = 'debezium-json');
CREATE TABLE in_both_all (item STRING, color STRING) WITH (
  'connector' = 'filesystem', 'path' = 'intersect_all.jsonl', 'format' = 'debezium-json');
CREATE TABLE only_a_all (item STRING, color STRING) WITH (
  'connector' = 'filesystem', 'path' = 'except_all.jsonl', 'format' = 'debezium-json');

EXECUTE STATEMENT SET
BEGIN
  INSERT INTO in_either SELECT * FROM shop_a UNION SELECT * FROM shop_b;
  INSERT INTO in_both SELECT * FROM shop_a INTERSECT SELECT * FROM shop_b;
  INSERT INTO only_a SELECT * FROM shop_a EXCEPT SELECT * FROM shop_b;
  INSERT INTO in_both_all SELECT * FROM shop_a INTERSECT ALL SELECT * FROM shop_b;
  INSERT INTO only_a_all SELECT * FROM shop_a EXCEPT ALL SELECT * FROM shop_b;
END;
