-- From a metric group to an alert: per-user metrics over process events,
-- and a ruleset that compares each event with its user's recent history.
--
--   go run ./cmd/sluice run examples/metrics.sql
--
-- procgen generates process-start events (hosts, users, images, command
-- lines) at 100 events a second of event time; 20,000 of them here.
CREATE TABLE events (
  event_time TIMESTAMP(3), host STRING, user_name STRING, parent_image STRING,
  image STRING, command_line STRING, pid BIGINT, parent_pid BIGINT, integrity_level STRING,
  WATERMARK FOR event_time AS event_time - INTERVAL '1' SECOND
) WITH ('connector' = 'procgen', 'events.num' = '20000', 'event-time.rate' = '100');

-- Each event gets its user's metrics, the event folded in.
CREATE METRIC GROUP user_activity ON events KEY BY (user_name) (
  METRIC hosts_10m   AS COUNT(DISTINCT host) WINDOW LAST(INTERVAL '10' MINUTE),
  METRIC elevated_1m AS COUNT(*) FILTER (WHERE integrity_level IN ('High', 'System')) WINDOW LAST(INTERVAL '1' MINUTE),
  METRIC processes   AS COUNT(*)
);

-- Rules over the event and its user's metrics.
CREATE RULESET user_alerts ON user_activity MATCH ANY (
  RULE spread         WHEN hosts_10m >= 150 AND processes > 1000 SEVERITY 'medium' TAGS ('lateral-movement'),
  RULE elevated_burst WHEN elevated_1m >= 40 AND image LIKE '%\powershell.exe' SEVERITY 'high' TAGS ('attack.execution')
);

CREATE TABLE alerts (event_time TIMESTAMP(3), user_name STRING, host STRING, hosts_10m BIGINT,
  elevated_1m BIGINT, rules ARRAY<STRING>, severity STRING, version INT)
WITH ('connector' = 'print');

INSERT INTO alerts
SELECT event_time, user_name, host, hosts_10m, elevated_1m, matched_rules, alert_severity, ruleset_version
FROM user_alerts;
