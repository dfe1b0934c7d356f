-- From a metric group to an alert: per-user metrics over process events,
-- and a ruleset that compares each event with its user's recent history.
--
--   go run ./cmd/sluice run examples/metrics.sql
--
-- procgen generates process-start events (hosts, users, images, command
-- lines) at 100 events a second of event time; 100,000 of them here (about 17 minutes of event time).
CREATE TABLE events (
  event_time TIMESTAMP(3), host STRING, user_name STRING, parent_image STRING,
  image STRING, command_line STRING, pid BIGINT, parent_pid BIGINT, integrity_level STRING,
  WATERMARK FOR event_time AS event_time - INTERVAL '1' SECOND
) WITH ('connector' = 'procgen', 'events.num' = '100000', 'event-time.rate' = '100');

-- Each event gets its user's metrics, the event folded in.
CREATE METRIC GROUP user_activity ON events KEY BY (user_name) (
  METRIC hosts_10m   AS COUNT(DISTINCT host) WINDOW LAST(INTERVAL '10' MINUTE),
  METRIC elevated_1m AS COUNT(*) FILTER (WHERE integrity_level IN ('High', 'System')) WINDOW LAST(INTERVAL '1' MINUTE),
  METRIC processes   AS COUNT(*)
);

-- Rules over the event and its user's metrics: service accounts are
-- known to run everywhere, and a user raises at most one alert every 10
-- minutes (the next one says how many were held back).
CREATE RULESET user_alerts ON user_activity MATCH ANY
  EXCEPT WHEN user_name LIKE 'NT AUTHORITY%' OR user_name IN ('root', 'www-data')
  SUPPRESS BY (user_name) FOR INTERVAL '10' MINUTE
(
  RULE spread         WHEN hosts_10m >= 50 SEVERITY 'medium' TAGS ('lateral-movement'),
  RULE elevated_burst WHEN elevated_1m >= 5 AND image LIKE '%\powershell.exe' SEVERITY 'high' TAGS ('attack.execution')
);

CREATE TABLE alerts (event_time TIMESTAMP(3), user_name STRING, host STRING, hosts_10m BIGINT,
  elevated_1m BIGINT, rules ARRAY<STRING>, severity STRING, held_back BIGINT)
WITH ('connector' = 'print');

INSERT INTO alerts
SELECT event_time, user_name, host, hosts_10m, elevated_1m, matched_rules, alert_severity, suppressed_count
FROM user_alerts;
