-- Sigma rules translated by sluice sigma: 1 detection, 1 correlation.

CREATE TABLE events (event_time TIMESTAMP(3), host STRING, user_name STRING, image STRING,
  command_line STRING, event_id INT, WATERMARK FOR event_time AS event_time - INTERVAL '5' SECOND)
WITH ('connector' = 'kafka', 'topic' = 'windows-events', 'format' = 'json',
      'properties.bootstrap.servers' = '127.0.0.1:9092', 'scan.startup.mode' = 'latest-offset');

CREATE TABLE alerts (ruleset STRING, version INT, rules ARRAY<STRING>, severity STRING, tags ARRAY<STRING>, event_time TIMESTAMP(3), host STRING, user_name STRING, command_line STRING) WITH ('connector' = 'print');
CREATE TABLE alerts_correlations (ruleset STRING, version INT, rule STRING, severity STRING, tags ARRAY<STRING>, group_key STRING, metric DOUBLE, event_time TIMESTAMP(3), host STRING, user_name STRING, command_line STRING) WITH ('connector' = 'print');

CREATE RULESET sigma ON events MATCH ANY (
  -- encoded_powershell: Encoded PowerShell [high] attack.execution attack.t1059.001 (rules.yml:1:1, id 5b4f6d2e-8c1a-4f3e-9a7b-2d6c0e1f3a45)
  RULE encoded_powershell WHEN REGEXP(LOWER(image), '\\powershell\.exe$|\\pwsh\.exe$') AND REGEXP(LOWER(command_line), ' [\-/\x{2013}\x{2014}\x{2015}]enc ') AND (LOWER(user_name) = 'system') IS NOT TRUE SEVERITY 'high' TAGS ('attack.execution', 'attack.t1059.001')
);

-- brute_force: Brute force [high] attack.credential_access attack.t1110 over failed_logon (rules.yml:22:1)
CREATE VIEW sigma_brute_force_events AS SELECT * FROM events WHERE event_id = 4625;
CREATE METRIC GROUP sigma_brute_force_metrics ON sigma_brute_force_events KEY BY (user_name) (
  METRIC events_5m AS COUNT(*) WINDOW LAST(INTERVAL '5' MINUTE)
);
CREATE RULESET sigma_brute_force ON sigma_brute_force_metrics (
  RULE brute_force WHEN events_5m >= 5 SEVERITY 'high' TAGS ('attack.credential_access', 'attack.t1110')
);

EXECUTE STATEMENT SET BEGIN
INSERT INTO alerts SELECT ruleset_name, ruleset_version, matched_rules, alert_severity, alert_tags, event_time, host, user_name, command_line FROM sigma;
INSERT INTO alerts_correlations SELECT ruleset_name, ruleset_version, 'brute_force' AS rule, alert_severity, alert_tags, CONCAT_WS(', ', CONCAT('User=', COALESCE(CAST(user_name AS STRING), ''))) AS group_key, CAST(events_5m AS DOUBLE) AS metric, event_time, host, user_name, command_line FROM sigma_brute_force;
END;
