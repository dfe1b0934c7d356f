package sluice_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicesql/sluice/internal/kafkatest"
)

// TestWindowJoinAcrossStop stops a window join of two Kafka topics with a
// durable state while a window is open: the stop emits nothing of it, and
// the next run, restored from the state, joins the window whole (the rows
// read before the stop and those after) and joins no earlier window
// again.
func TestWindowJoinAcrossStop(t *testing.T) {
	bs := kafkatest.Start(t, 1, "l", "r")
	dir := t.TempDir()
	produce := func(from, to int) { // one row a second on each topic
		for _, topic := range []string{"l", "r"} {
			var recs []*kgo.Record
			for i := from; i < to; i++ {
				ts := clusterBase.Add(time.Duration(i) * time.Second)
				recs = append(recs, &kgo.Record{Topic: topic,
					Value: fmt.Appendf(nil, `{"i":%d,"ts":"%s"}`, i, ts.Format("2006-01-02 15:04:05"))})
			}
			kafkatest.Produce(t, bs, topic, recs...)
		}
	}
	src := strings.ReplaceAll(`
SET 'state.dir' = '`+dir+`';
SET 'execution.checkpointing.interval' = '50ms';
SET 'parallelism.default' = '2';
CREATE TABLE l (i INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH (
  'connector' = 'kafka', 'topic' = 'l', 'properties.bootstrap.servers' = '$BS',
  'scan.startup.mode' = 'earliest-offset', 'format' = 'json');
CREATE TABLE r (i INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH (
  'connector' = 'kafka', 'topic' = 'r', 'properties.bootstrap.servers' = '$BS',
  'scan.startup.mode' = 'earliest-offset', 'format' = 'json');
CREATE TABLE out (ws TIMESTAMP(3), i INT) WITH ('connector' = 'print');
INSERT INTO out SELECT a.window_start, a.i
FROM TABLE(TUMBLE(TABLE l, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) a
JOIN TABLE(TUMBLE(TABLE r, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) b
  ON a.window_start = b.window_start AND a.window_end = b.window_end AND a.i = b.i;`, "$BS", bs)
	run := func(wait string) string { return runUntilStop(t, src, wait) }
	count := func(out, window string) int { return strings.Count(out, "+I[2026-01-01 "+window+".000, ") }
	produce(0, 150) // 00:00 and 00:01 complete, 00:02 open with 30 rows a side
	first := run("+I[2026-01-01 00:01:00.000, 119]")
	if n0, n1, n2 := count(first, "00:00:00"), count(first, "00:01:00"), count(first, "00:02:00"); n0 != 60 || n1 != 60 || n2 != 0 {
		t.Fatalf("first run: %d, %d, %d rows of windows 00:00, 00:01, 00:02; want 60, 60, 0:\n%s", n0, n1, n2, first)
	}
	produce(150, 200) // the rest of 00:02, and 00:03 opens
	second := run("+I[2026-01-01 00:02:00.000, 179]")
	if n0, n1, n2 := count(second, "00:00:00"), count(second, "00:01:00"), count(second, "00:02:00"); n0 != 0 || n1 != 0 || n2 != 60 {
		t.Fatalf("second run: %d, %d, %d rows of windows 00:00, 00:01, 00:02; want 0, 0, 60:\nfirst run:\n%ssecond run:\n%s", n0, n1, n2, first, second)
	}
}
