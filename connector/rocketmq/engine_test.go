package rocketmq_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sluicesql/sluice/internal/enginetest"
	"github.com/sluicesql/sluice/internal/rocketmqfake"
)

func startFake(t testing.TB, opts rocketmqfake.Options) *rocketmqfake.Server {
	t.Helper()
	s, err := rocketmqfake.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func publish(t testing.TB, s *rocketmqfake.Server, topic string, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		if _, _, err := s.Publish("", topic, -1, rocketmqfake.Message{Body: fmt.Appendf(nil, `{"n":%d}`, i)}); err != nil {
			t.Fatal(err)
		}
	}
}

func sorted(s []string) string {
	s = append([]string(nil), s...)
	sort.Strings(s)
	return strings.Join(s, " ")
}

func want(from, to int, format string) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf(format, i))
	}
	return out
}

// TestReceiveFilterAndMetadata receives with a tag filter and reads the
// messages' metadata.
func TestReceiveFilterAndMetadata(t *testing.T) {
	s := startFake(t, rocketmqfake.Options{Queues: 2})
	born := time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC)
	msgs := []rocketmqfake.Message{
		{ID: "M1", Tag: "a", Keys: []string{"k1"}, Properties: map[string]string{"p": "1", "o": "x"}, Body: []byte(`{"n":1}`), Born: born},
		{ID: "M2", Tag: "c", Body: []byte(`{"n":2}`), Born: born},
		{ID: "M3", Tag: "b", Keys: []string{"k3", "k4"}, Body: []byte(`{"n":3}`), Born: born},
	}
	for _, m := range msgs {
		if _, _, err := s.Publish("", "events", 0, m); err != nil {
			t.Fatal(err)
		}
	}
	e := enginetest.Open(t)
	j := e.Start(t, `
SET 'table.local-time-zone' = 'UTC';
CREATE TABLE ev (
  n INT,
  id STRING METADATA FROM 'message-id' VIRTUAL,
  tag STRING METADATA VIRTUAL,
  ks ARRAY<STRING> METADATA FROM 'keys' VIRTUAL,
  props MAP<STRING, STRING> METADATA FROM 'properties' VIRTUAL,
  born TIMESTAMP_LTZ(3) METADATA FROM 'born-timestamp' VIRTUAL,
  q INT METADATA FROM 'queue-id' VIRTUAL,
  off BIGINT METADATA FROM 'queue-offset' VIRTUAL,
  att INT METADATA FROM 'delivery-attempt' VIRTUAL,
  tp STRING METADATA FROM 'topic' VIRTUAL
) WITH ('connector' = 'rocketmq', 'endpoints' = '$EP', 'topic' = 'events', 'consumer-group' = 'g1',
  'tag' = 'a || b', 'format' = 'json');
CREATE TABLE out (n INT, id STRING, tag STRING, ks ARRAY<STRING>, props MAP<STRING, STRING>, born TIMESTAMP_LTZ(3),
  q INT, off BIGINT, att INT, tp STRING) WITH ('connector' = 'print');
INSERT INTO out SELECT * FROM ev;`, "$EP", s.Addr())
	got := e.Out.WaitLines(t, "+I", 2)
	time.Sleep(200 * time.Millisecond) // a third row would be the filtered one
	enginetest.Stop(t, j)
	got = e.Out.Lines("+I")
	w := []string{
		"+I[1, M1, a, [k1], {o=x, p=1}, 2026-01-02 03:04:05.006, null, 0, 1, events]",
		"+I[3, M3, b, [k3, k4], {}, 2026-01-02 03:04:05.006, null, 2, 1, events]",
	}
	if sorted(got) != sorted(w) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(w, "\n"))
	}
}

// receiveJob is a job with durable state and checkpoints that receives
// as a consumer group.
const receiveJob = `
SET 'state.dir' = '$DIR';
SET 'pipeline.name' = 'recv';
SET 'execution.checkpointing.interval' = '$CP';
CREATE TABLE m (n INT, att INT METADATA FROM 'delivery-attempt' VIRTUAL) WITH ('connector' = 'rocketmq',
  'endpoints' = '$EP', 'topic' = 'in', 'consumer-group' = 'g', 'format' = 'json',
  'scan.invisible-duration' = '$INV', 'scan.receive.await' = '200ms');
CREATE TABLE out (n INT, att INT) WITH ('connector' = 'print');
INSERT INTO out SELECT * FROM m;`

// TestReceiveAcknowledgedAfterCheckpoint stops a job (its final commit
// acknowledges what it read), sends more while it is away and starts it
// again: it receives the new messages, and nothing twice.
func TestReceiveAcknowledgedAfterCheckpoint(t *testing.T) {
	s := startFake(t, rocketmqfake.Options{})
	repl := []string{"$EP", s.Addr(), "$DIR", t.TempDir(), "$CP", "50ms", "$INV", "2s"}
	publish(t, s, "in", 0, 20)
	e := enginetest.Open(t)
	j := e.Start(t, receiveJob, repl...)
	e.Out.WaitLines(t, "+I", 20)
	enginetest.Stop(t, j)
	e.Close()
	publish(t, s, "in", 20, 30)
	e2 := enginetest.Open(t)
	j2 := e2.Start(t, receiveJob, repl...)
	e2.Out.WaitLines(t, "+I", 10)
	time.Sleep(2500 * time.Millisecond) // past the invisible time: anything unacknowledged would come again
	enginetest.Stop(t, j2)
	got := append(e.Out.Lines("+I"), e2.Out.Lines("+I")...)
	// Each number once. A message published while the job was away may
	// come as a second delivery: a receive call of the stopped run that
	// the proxy had not yet seen end may have taken it (its invisible
	// time then passed); it was never read twice.
	var ns []string
	for _, r := range got {
		n, att, _ := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(r, "+I["), "]"), ", ")
		if att != "1" && att != "2" {
			t.Errorf("row %s: delivery attempt %s", r, att)
		}
		ns = append(ns, n)
	}
	if w := want(0, 30, "%d"); sorted(ns) != sorted(w) {
		t.Errorf("got %d rows:\n%s\nwant 0..29 once each", len(got), sorted(got))
	}
}

// TestReceiveRedeliveredAfterInvisibleTime cancels a job before any
// checkpoint: what it received was never acknowledged, and the next run
// gets it again once its invisible time ends (at-least-once), as a
// second delivery.
func TestReceiveRedeliveredAfterInvisibleTime(t *testing.T) {
	s := startFake(t, rocketmqfake.Options{})
	repl := []string{"$EP", s.Addr(), "$DIR", t.TempDir(), "$CP", "1h", "$INV", "1s"}
	publish(t, s, "in", 0, 10)
	e := enginetest.Open(t)
	j := e.Start(t, receiveJob, repl...)
	e.Out.WaitLines(t, "+I", 10)
	j.Cancel() // as a crash: no checkpoint, no final commit
	<-j.Done()
	e.Close()
	e2 := enginetest.Open(t)
	j2 := e2.Start(t, receiveJob, repl...)
	got := e2.Out.WaitLines(t, "+I", 10)
	enginetest.Stop(t, j2)
	if w := want(0, 10, "+I[%d, 2]"); sorted(got) != sorted(w) {
		t.Errorf("got %d rows:\n%s\nwant 0..9 delivered a second time", len(got), sorted(got))
	}
}

// TestReceiveRenewsInvisibleTime holds messages longer than their
// invisible time (no checkpoint for a while): the reader renews it, so
// they are not delivered again meanwhile.
func TestReceiveRenewsInvisibleTime(t *testing.T) {
	s := startFake(t, rocketmqfake.Options{})
	repl := []string{"$EP", s.Addr(), "$DIR", t.TempDir(), "$CP", "1h", "$INV", "1s"}
	publish(t, s, "in", 0, 5)
	e := enginetest.Open(t)
	j := e.Start(t, receiveJob, repl...)
	e.Out.WaitLines(t, "+I", 5)
	time.Sleep(3 * time.Second)
	enginetest.Stop(t, j)
	if got := e.Out.Lines("+I"); sorted(got) != sorted(want(0, 5, "+I[%d, 1]")) {
		t.Errorf("got %d rows:\n%s\nwant 0..4 once each", len(got), sorted(got))
	}
}

// offsetsJob reads by queue offsets, with durable state and checkpoints.
const offsetsJob = `
SET 'state.dir' = '$DIR';
SET 'pipeline.name' = 'offs';
SET 'execution.checkpointing.interval' = '50ms';
CREATE TABLE m (n INT, q INT METADATA FROM 'queue-id' VIRTUAL, off BIGINT METADATA FROM 'queue-offset' VIRTUAL)
  WITH ('connector' = 'rocketmq', 'endpoints' = '$EP', 'topic' = 'in', 'scan.mode' = 'offsets', 'format' = 'json' $MORE);
CREATE TABLE out (n INT, q INT, off BIGINT) WITH ('connector' = 'print');
INSERT INTO out SELECT * FROM m;`

// TestOffsetsResume reads every queue of a topic by offset, stops, and
// resumes after the offsets its checkpoint holds: nothing is read twice.
func TestOffsetsResume(t *testing.T) {
	s := startFake(t, rocketmqfake.Options{Queues: 3})
	repl := []string{"$EP", s.Addr(), "$DIR", t.TempDir(), "$MORE", ""}
	publish(t, s, "in", 0, 30) // round-robin: message i in queue i%3 at offset i/3
	e := enginetest.Open(t)
	j := e.Start(t, offsetsJob, repl...)
	e.Out.WaitLines(t, "+I", 30)
	enginetest.Stop(t, j)
	e.Close()
	publish(t, s, "in", 30, 45)
	e2 := enginetest.Open(t)
	j2 := e2.Start(t, offsetsJob, repl...)
	e2.Out.WaitLines(t, "+I", 15)
	time.Sleep(200 * time.Millisecond)
	enginetest.Stop(t, j2)
	var w []string
	for i := range 45 {
		w = append(w, fmt.Sprintf("+I[%d, %d, %d]", i, i%3, i/3))
	}
	if got := append(e.Out.Lines("+I"), e2.Out.Lines("+I")...); sorted(got) != sorted(w) {
		t.Errorf("got %d rows:\n%s\nwant 45, once each", len(got), sorted(got))
	}
}

// TestOffsetsStartupLatest starts at the end of every queue.
func TestOffsetsStartupLatest(t *testing.T) {
	s := startFake(t, rocketmqfake.Options{Queues: 2})
	publish(t, s, "in", 0, 10)
	e := enginetest.Open(t)
	j := e.Start(t, offsetsJob, "$EP", s.Addr(), "$DIR", t.TempDir(), "$MORE", ", 'scan.startup.mode' = 'latest-offset'")
	time.Sleep(300 * time.Millisecond)
	publish(t, s, "in", 10, 12)
	e.Out.WaitLines(t, "+I", 2)
	time.Sleep(100 * time.Millisecond)
	enginetest.Stop(t, j)
	if got := e.Out.Lines("+I"); sorted(got) != "+I[10, 0, 5] +I[11, 1, 5]" {
		t.Errorf("got %s, want the two messages sent after the start", sorted(got))
	}
}

// TestSinks writes with both delivery guarantees; the exactly-once sink's
// messages are visible once committed, and no half message is left.
func TestSinks(t *testing.T) {
	for _, g := range []string{"at-least-once", "exactly-once"} {
		t.Run(g, func(t *testing.T) {
			s := startFake(t, rocketmqfake.Options{Queues: 2})
			e := enginetest.Open(t)
			j := e.Start(t, `
SET 'state.dir' = '$DIR';
SET 'execution.checkpointing.interval' = '20ms';
CREATE TABLE src (n INT) WITH ('connector' = 'datagen', 'number-of-rows' = '200', 'rows-per-second' = '2000',
  'fields.n.kind' = 'sequence', 'fields.n.start' = '0', 'fields.n.end' = '199');
CREATE TABLE dst (n INT, k STRING) WITH ('connector' = 'rocketmq', 'endpoints' = '$EP', 'topic' = 'out',
  'tag' = 'TagA', 'sink.keys-column' = 'k', 'format' = 'json', 'sink.delivery-guarantee' = '$G');
INSERT INTO dst SELECT n, CONCAT('key-', CAST(n AS STRING)) FROM src;`, "$EP", s.Addr(), "$G", g, "$DIR", t.TempDir())
			enginetest.Wait(t, j)
			got := s.Messages("out")
			if len(got) != 200 {
				t.Fatalf("%d messages in the topic, want 200", len(got))
			}
			seen := map[string]bool{}
			for _, m := range got {
				var n int
				if _, err := fmt.Sscanf(string(m.Body), `{"n":%d,`, &n); err != nil {
					t.Fatalf("body %q: %v", m.Body, err)
				}
				if m.Tag != "TagA" || len(m.Keys) != 1 || m.Keys[0] != fmt.Sprintf("key-%d", n) {
					t.Errorf("message %q: tag %q keys %q", m.Body, m.Tag, m.Keys)
				}
				if _, txn := m.Properties["SLUICE_TXN"]; txn != (g == "exactly-once") {
					t.Errorf("message %q: properties %v", m.Body, m.Properties)
				}
				seen[string(m.Body)] = true
			}
			if len(seen) != 200 {
				t.Errorf("%d distinct messages, want 200", len(seen))
			}
			if n := s.HalfMessages("out"); n != 0 {
				t.Errorf("%d half messages left", n)
			}
		})
	}
}

// TestErrors lists options refused, and failures with a clear error.
func TestErrors(t *testing.T) {
	s := startFake(t, rocketmqfake.Options{NoAutoCreate: true, Credentials: map[string]string{"ak": "sk"}})
	if err := s.CreateTopic("", "t", 2); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.txt")
	cases := []struct {
		name, with, want string
	}{
		{"no group", `'topic' = 't'`, "option 'consumer-group' is required"},
		{"bad endpoints", `'topic' = 't', 'consumer-group' = 'g', 'endpoints' = 'http://x'`, "is not host:port"},
		{"half credentials", `'topic' = 't', 'consumer-group' = 'g', 'access-key' = 'ak'`, "'access-key' and 'secret-key' go together"},
		{"bad mode", `'topic' = 't', 'consumer-group' = 'g', 'scan.mode' = 'pull'`, "option 'scan.mode' must be"},
		{"startup without offsets", `'topic' = 't', 'consumer-group' = 'g', 'scan.startup.mode' = 'latest-offset'`, "needs 'scan.mode' = 'offsets'"},
		{"wrong secret", `'topic' = 't', 'scan.mode' = 'offsets', 'access-key' = 'ak', 'secret-key' = 'nope'`, "wrong signature for access key 'ak'"},
		{"unknown topic", `'topic' = 'nope', 'scan.mode' = 'offsets', 'access-key' = 'ak', 'secret-key' = 'sk'`, "topic 'nope' does not exist"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := enginetest.Open(t)
			with := c.with
			if !strings.Contains(with, "'endpoints'") {
				with += ", 'endpoints' = '$EP'"
			}
			err := e.ExecErr(`
CREATE TABLE m (n INT) WITH ('connector' = 'rocketmq', 'format' = 'json', 'connect.timeout' = '1s', `+with+`);
CREATE TABLE out (n INT) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT * FROM m;`, "$EP", s.Addr())
			if err == nil {
				t.Fatalf("no error, want %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v\nwant it to say %q", err, c.want)
			}
		})
	}
	t.Run("sink takes no scan options", func(t *testing.T) {
		e := enginetest.Open(t)
		err := e.ExecErr(`
CREATE TABLE src (n INT) WITH ('connector' = 'datagen', 'number-of-rows' = '1');
CREATE TABLE dst (n INT) WITH ('connector' = 'rocketmq', 'endpoints' = '$EP', 'topic' = 't', 'format' = 'json', 'scan.mode' = 'offsets');
INSERT INTO dst SELECT * FROM src;`, "$EP", s.Addr())
		if err == nil || !strings.Contains(err.Error(), "a sink table takes the 'sink.' options") {
			t.Errorf("got %v", err)
		}
	})
	t.Run("malformed", func(t *testing.T) {
		for i, body := range []string{`{"n":1}`, `not json`, `{"n":3}`} {
			if _, _, err := s.Publish("", "t", 0, rocketmqfake.Message{ID: fmt.Sprintf("ID%d", i), Body: []byte(body)}); err != nil {
				t.Fatal(err)
			}
		}
		e := enginetest.Open(t)
		j := e.Start(t, `
CREATE TABLE m (n INT) WITH ('connector' = 'rocketmq', 'endpoints' = '$EP', 'topic' = 't', 'scan.mode' = 'offsets',
  'access-key' = 'ak', 'secret-key' = 'sk', 'format' = 'json');
CREATE TABLE out (n INT) WITH ('connector' = 'print');
INSERT INTO out SELECT * FROM m;`, "$EP", s.Addr())
		err := enginetest.WaitErr(t, j)
		if err == nil || !strings.Contains(err.Error(), "queue 0 offset 1 message ID1: cannot decode record") {
			t.Errorf("got %v", err)
		}
		e2 := enginetest.Open(t)
		j2 := e2.Start(t, `
CREATE TABLE m (n INT) WITH ('connector' = 'rocketmq', 'endpoints' = '$EP', 'topic' = 't', 'scan.mode' = 'offsets',
  'access-key' = 'ak', 'secret-key' = 'sk', 'format' = 'json', 'dead-letter.path' = '$BAD');
CREATE TABLE out (n INT) WITH ('connector' = 'print');
INSERT INTO out SELECT * FROM m;`, "$EP", s.Addr(), "$BAD", bad)
		e2.Out.WaitLines(t, "+I", 2)
		enginetest.Stop(t, j2)
		if b, _ := os.ReadFile(bad); string(b) != "not json\n" {
			t.Errorf("dead letters %q", b)
		}
	})
}

// TestProxyDownAtStart fails a source whose proxy does not answer within
// 'connect.timeout'.
func TestProxyDownAtStart(t *testing.T) {
	s := startFake(t, rocketmqfake.Options{})
	addr := s.Addr()
	s.Close()
	e := enginetest.Open(t)
	err := e.ExecErr(`
CREATE TABLE m (n INT) WITH ('connector' = 'rocketmq', 'endpoints' = '$EP', 'topic' = 't', 'scan.mode' = 'offsets',
  'format' = 'json', 'connect.timeout' = '500ms');
CREATE TABLE out (n INT) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT * FROM m;`, "$EP", addr)
	if err == nil || !strings.Contains(err.Error(), "within 500ms ('connect.timeout')") {
		t.Errorf("got %v", err)
	}
}

// TestOffsetsBounded reads every queue up to its end at start, and ends.
func TestOffsetsBounded(t *testing.T) {
	s := startFake(t, rocketmqfake.Options{Queues: 3})
	publish(t, s, "in", 0, 10)
	e := enginetest.Open(t)
	j := e.Start(t, offsetsJob, "$EP", s.Addr(), "$DIR", t.TempDir(), "$MORE", ", 'scan.bounded.mode' = 'latest-offset'")
	enginetest.Wait(t, j)
	if got := e.Out.Lines("+I"); len(got) != 10 {
		t.Errorf("got %d rows, want 10: %s", len(got), sorted(got))
	}
}

// TestProxyRestart stops the proxy under running jobs, sends while it is
// down, and starts it again: both modes go on, logging the loss and the
// recovery, and read everything.
func TestProxyRestart(t *testing.T) {
	for _, mode := range []string{"offsets", "receive"} {
		t.Run(mode, func(t *testing.T) {
			s := startFake(t, rocketmqfake.Options{Queues: 2})
			publish(t, s, "in", 0, 10)
			e := enginetest.Open(t)
			j := e.Start(t, `
CREATE TABLE m (n INT) WITH ('connector' = 'rocketmq', 'endpoints' = '$EP', 'topic' = 'in', 'scan.mode' = '$MODE',
  'consumer-group' = 'g', 'scan.receive.await' = '200ms', 'format' = 'json');
CREATE TABLE out (n INT) WITH ('connector' = 'print');
INSERT INTO out SELECT * FROM m;`, "$EP", s.Addr(), "$MODE", mode)
			e.Out.WaitLines(t, "+I", 10)
			s.Stop()
			publish(t, s, "in", 10, 20)
			time.Sleep(500 * time.Millisecond) // the readers find the proxy gone
			if err := s.Resume(); err != nil {
				t.Fatal(err)
			}
			e.Out.WaitLines(t, "+I", 20)
			enginetest.Stop(t, j)
			if got := e.Out.Lines("+I"); sorted(got) != sorted(want(0, 20, "+I[%d]")) {
				t.Errorf("got %d rows: %s", len(got), sorted(got))
			}
			if l := e.Log.String(); !strings.Contains(l, "again after") {
				t.Errorf("the log does not tell of the recovery:\n%s", l)
			}
		})
	}
}
