package sluice_test

import (
	"context"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/internal/cputime"
)

// metricBenchGroup is ten metrics over the process-event generator
// (procgen: 500 Zipf-picked hosts, 10,000 events a second of event time),
// keyed by host, over every window kind.
const metricBenchGroup = `CREATE TABLE events (event_time TIMESTAMP(3), host STRING, user_name STRING, parent_image STRING,
  image STRING, command_line STRING, pid BIGINT, parent_pid BIGINT, integrity_level STRING,
  WATERMARK FOR event_time AS event_time - INTERVAL '1' SECOND)
WITH ('connector' = 'procgen', 'events.num' = '$EVENTS');
CREATE METRIC GROUP m ON events KEY BY (host) (
  METRIC n            AS COUNT(*),
  METRIC n_1m         AS COUNT(*) WINDOW TUMBLE(INTERVAL '1' MINUTE),
  METRIC high_1m      AS COUNT(*) FILTER (WHERE integrity_level = 'High') WINDOW TUMBLE(INTERVAL '1' MINUTE),
  METRIC users_1h     AS COUNT(DISTINCT user_name) WINDOW HOP(INTERVAL '5' MINUTE, INTERVAL '1' HOUR),
  METRIC max_pid_1h   AS MAX(pid) WINDOW HOP(INTERVAL '5' MINUTE, INTERVAL '1' HOUR),
  METRIC n_session    AS COUNT(*) WINDOW SESSION(INTERVAL '10' MINUTE),
  METRIC images_sess  AS COUNT(DISTINCT image) WINDOW SESSION(INTERVAL '10' MINUTE),
  METRIC n_30s        AS COUNT(*) WINDOW LAST(INTERVAL '30' SECOND),
  METRIC shells_30s   AS COUNT(*) FILTER (WHERE image LIKE '%powershell%' OR image LIKE '%cmd.exe') WINDOW LAST(INTERVAL '30' SECOND),
  METRIC max_ppid_30s AS MAX(parent_pid) WINDOW LAST(INTERVAL '30' SECOND)
);
`

// BenchmarkMetricGroup runs ten metrics of a metric group keyed by host
// over SLUICE_METRIC_EVENTS process events (default 200,000), into a
// blackhole ("metrics") or through a ruleset of three rules over them
// ("ruleset"), and reports events per CPU second:
//
//	GOMAXPROCS=1 SLUICE_METRIC_EVENTS=1000000 go test . -run '^$' -bench '^BenchmarkMetricGroup$' -benchtime 1x
func BenchmarkMetricGroup(b *testing.B) {
	events := 200_000
	if s := os.Getenv("SLUICE_METRIC_EVENTS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil {
			b.Fatal(err)
		}
		events = v
	}
	group := strings.ReplaceAll(metricBenchGroup, "$EVENTS", strconv.Itoa(events))
	for _, c := range []struct{ name, sql string }{
		{"metrics", `CREATE TABLE out (host STRING, n BIGINT, n_1m BIGINT, high_1m BIGINT, users_1h BIGINT, max_pid_1h BIGINT,
  n_session BIGINT, images_sess BIGINT, n_30s BIGINT, shells_30s BIGINT, max_ppid_30s BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT host, n, n_1m, high_1m, users_1h, max_pid_1h, n_session, images_sess, n_30s, shells_30s, max_ppid_30s FROM m;
`},
		{"ruleset", `CREATE RULESET rs ON m (
  RULE burst WHEN n_30s > 200 SEVERITY 'low',
  RULE shells WHEN shells_30s >= 20 AND image LIKE '%powershell%' SEVERITY 'high',
  RULE new_users WHEN users_1h > 40 AND integrity_level = 'High'
);
CREATE TABLE alerts (host STRING, rules ARRAY<STRING>) WITH ('connector' = 'blackhole');
INSERT INTO alerts SELECT host, matched_rules FROM rs;
`},
	} {
		b.Run(c.name, func(b *testing.B) {
			src := group + c.sql
			cpu := cputime.Seconds()
			for range b.N {
				e, err := sluice.Open(sluice.Options{Stdout: io.Discard})
				if err != nil {
					b.Fatal(err)
				}
				res, err := e.Exec(context.Background(), "metrics.sql", []byte(src))
				if err != nil {
					b.Fatal(sluice.FormatError(err, []byte(src)))
				}
				job := res[len(res)-1].Job
				if err := job.Wait(); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(job.Metrics.RowsOut.Load())/float64(events), "out/event")
				e.Close()
			}
			if c := cputime.Seconds() - cpu; c > 0 {
				b.ReportMetric(float64(events)*float64(b.N)/c, "events/cpu-s")
			}
		})
	}
}
