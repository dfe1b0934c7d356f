package kafka_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/internal/kafkatest"
)

// runLogged runs src, with $BOOTSTRAP and $STATE replaced, in a fresh
// engine and returns what it printed, its log and its error.
func runLogged(t *testing.T, bootstrap, stateDir, src string) (out, log string, err error) {
	t.Helper()
	var o, l bytes.Buffer
	e, err := sluice.Open(sluice.Options{Stdout: &o, Log: &l})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	src = strings.NewReplacer("$BOOTSTRAP", bootstrap, "$STATE", stateDir).Replace(src)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err = e.Run(ctx, "test.sql", []byte(src))
	return o.String(), l.String(), err
}

// lastCount returns the last count printed for key k by a
// "SELECT k, COUNT(*) ... GROUP BY k" job, or "" if none.
func lastCount(out, k string) string {
	n := ""
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "+I["+k+", ") || strings.HasPrefix(line, "+U["+k+", ") {
			n = strings.TrimSuffix(line[len("+I["+k+", "):], "]")
		}
	}
	return n
}

func recreateTopic(t *testing.T, bs, topic string, values ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), kafkatest.Timeout)
	defer cancel()
	resp, err := kafkatest.Admin(t, bs).DeleteTopics(ctx, topic)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("cannot delete topic %s: %v", topic, err)
	}
	kafkatest.CreateTopic(t, bs, topic, 1)
	var recs []*kgo.Record
	for _, v := range values {
		recs = append(recs, &kgo.Record{Value: []byte(v)})
	}
	kafkatest.ProduceTo(t, bs, topic, recs...)
}

// TestEngineResumeBeyondLogEnd: a job resumes from a checkpoint whose
// Kafka offset lies beyond the end of the log, because the topic was
// deleted and recreated with fewer records. Flink's KafkaSource seeks its
// restored split to the checkpointed offset and its consumer, finding it
// out of range, resets as 'auto.offset.reset' says, which KafkaSourceBuilder
// sets from the startup mode: earliest for 'earliest-offset' (and
// 'specific-offsets'), latest for 'latest-offset' (and 'timestamp'), and
// for 'group-offsets' 'properties.auto.offset.reset' ('none' fails). Sluice
// does the same and says so in the job's log; the rows of the new log are
// counted, not dropped as replays of the old one.
func TestEngineResumeBeyondLogEnd(t *testing.T) {
	for _, tc := range []struct {
		name, opts string
		// want is the second run's final count, or its error's text;
		// third the count after two more records.
		want, log, third string
	}{
		{"earliest", "'scan.startup.mode' = 'earliest-offset'", "13", "reading on from the earliest offset, 0", "15"},
		{"timestamp: latest", "'scan.startup.mode' = 'timestamp', 'scan.startup.timestamp-millis' = '1'", "10", "reading on from the latest offset, 3", ""},
		{"group none", "'scan.startup.mode' = 'group-offsets', 'properties.group.id' = 'g', 'properties.auto.offset.reset' = 'none'",
			"ERROR: the job's checkpoint is at offset 10 of topic in partition 0, beyond the end of its log (3)", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bs := kafkatest.Start(t, 1, "in")
			var recs []*kgo.Record
			for range 10 {
				recs = append(recs, &kgo.Record{Value: []byte(`{"k":"a"}`)})
			}
			kafkatest.ProduceTo(t, bs, "in", recs...)
			kafkatest.CommitOffsets(t, bs, "g", "in", map[int32]int64{0: 0})
			src := fmt.Sprintf(`
SET 'state.dir' = '$STATE';
SET 'execution.checkpointing.interval' = '20ms';
CREATE TABLE src (k STRING) WITH ('connector' = 'kafka', 'topic' = 'in',
  'properties.bootstrap.servers' = '$BOOTSTRAP', 'format' = 'json',
  'scan.bounded.mode' = 'latest-offset', %s);
SELECT k, COUNT(*) FROM src GROUP BY k;
`, tc.opts)
			state := filepath.Join(t.TempDir(), "state")
			out, _, err := runLogged(t, bs, state, src)
			if err != nil {
				t.Fatal(err)
			}
			if n := lastCount(out, "a"); n != "10" {
				t.Fatalf("first run counted %q, want 10:\n%s", n, out)
			}
			recreateTopic(t, bs, "in", `{"k":"a"}`, `{"k":"a"}`, `{"k":"a"}`)
			out, log, err := runLogged(t, bs, state, src)
			if want, ok := strings.CutPrefix(tc.want, "ERROR: "); ok {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("got error %v, want %q", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("the job's log:\n%s", log)
			if n := lastCount(out, "a"); n != tc.want && !(tc.want == "10" && n == "") { // nothing new: nothing printed
				t.Errorf("second run counted %q, want %s:\n%s", n, tc.want, out)
			}
			if !strings.Contains(log, "beyond the end of its log") || !strings.Contains(log, tc.log) {
				t.Errorf("the job's log does not say what happened (want %q):\n%s", tc.log, log)
			}
			// A third run resumes in the new log where the second left it.
			// A run that read nothing after its reset (latest) leaves the
			// checkpoint where it was, as Flink's split state, which moves
			// with the records read, does: the next run resets again.
			kafkatest.ProduceTo(t, bs, "in", &kgo.Record{Value: []byte(`{"k":"a"}`)}, &kgo.Record{Value: []byte(`{"k":"a"}`)})
			out, log, err = runLogged(t, bs, state, src)
			if err != nil {
				t.Fatal(err)
			}
			if n, want := lastCount(out, "a"), tc.third; n != want {
				t.Errorf("third run counted %q, want %s:\n%s", n, want, out)
			}
			if again := strings.Contains(log, "kafka table"); again != (tc.third == "") {
				t.Errorf("the third run reset again: %v, want %v:\n%s", again, tc.third == "", log)
			}
		})
	}
}
