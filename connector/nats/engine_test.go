package nats_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicesql/sluice/internal/enginetest"
	"github.com/sluicesql/sluice/internal/natstest"
)

func sorted(s []string) []string {
	s = append([]string(nil), s...)
	sort.Strings(s)
	return s
}

// TestCoreSourceWildcardsAndMetadata reads two subjects with wildcards,
// with the message's subject and headers as METADATA columns.
func TestCoreSourceWildcardsAndMetadata(t *testing.T) {
	s := natstest.Start(t)
	nc := s.Conn(t)
	e := enginetest.Open(t)
	j := e.Start(t, `
CREATE TABLE readings (
  id INT, temp DOUBLE,
  subj STRING METADATA FROM 'subject' VIRTUAL,
  hdrs MAP<STRING, STRING> METADATA FROM 'headers' VIRTUAL,
  seq BIGINT METADATA FROM 'sequence' VIRTUAL
) WITH ('connector' = 'nats', 'servers' = '$SERVER', 'subject' = 'sensors.*.temp, alerts.>', 'format' = 'json');
CREATE TABLE out (id INT, temp DOUBLE, subj STRING, site STRING, seq BIGINT) WITH ('connector' = 'print');
INSERT INTO out SELECT id, temp, subj, hdrs['site'], seq FROM readings WHERE temp > 20;`, "$SERVER", s.URL)
	waitSubscribed(t, e, nc, "sensors.probe.temp")
	pub := func(subj, data string, hdr ...string) {
		m := &nats.Msg{Subject: subj, Data: []byte(data), Header: nats.Header{}}
		for i := 0; i+1 < len(hdr); i += 2 {
			m.Header.Add(hdr[i], hdr[i+1])
		}
		if err := nc.PublishMsg(m); err != nil {
			t.Fatal(err)
		}
	}
	pub("sensors.a.temp", `{"id":1,"temp":21.5}`, "site", "north")
	pub("sensors.b.temp", `{"id":2,"temp":19}`)
	pub("sensors.b.humidity", `{"id":3,"temp":30}`)
	pub("alerts.zone1.fire", `{"id":4,"temp":99}`, "site", "a", "site", "b")
	pub("sensors.c.temp", `{"id":5,"temp":25}`)
	nc.Flush()
	e.Out.WaitLines(t, "+I[", 3)
	enginetest.Stop(t, j)
	// Each subscription hands its messages over on its own: sort.
	got := sorted(e.Out.Lines("+I["))
	want := []string{"+I[1, 21.5, sensors.a.temp, north, null]", "+I[4, 99.0, alerts.zone1.fire, b, null]", "+I[5, 25.0, sensors.c.temp, null, null]"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// waitSubscribed publishes probes (rows that fail the test's filter are
// not expected: the probe subject is chosen to be read and dropped) until
// the server reports a subscription; it relies on the server's
// subscription interest as seen by a no-responders request.
func waitSubscribed(t testing.TB, e *enginetest.Engine, nc *nats.Conn, subject string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		// A request to a subject with a subscriber that never answers
		// times out; without one, the server says no responders.
		_, err := nc.Request(subject, []byte(`{"id":0,"temp":0}`), 20*time.Millisecond)
		if err == nats.ErrTimeout {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("nothing subscribed to %s; log:\n%s", subject, e.Log)
}

// TestCoreQueueGroup splits a subject between two jobs of one queue
// group: each message goes to one of them.
func TestCoreQueueGroup(t *testing.T) {
	s := natstest.Start(t)
	nc := s.Conn(t)
	const ddl = `
SET 'pipeline.name' = '$NAME';
CREATE TABLE m (n INT) WITH ('connector' = 'nats', 'servers' = '$SERVER', 'subject' = 'q.*', 'queue-group' = 'g', 'format' = 'json');
CREATE TABLE out (n INT) WITH ('connector' = 'print');
INSERT INTO out SELECT * FROM m WHERE n >= 0;`
	e1, e2 := enginetest.Open(t), enginetest.Open(t)
	j1 := e1.Start(t, ddl, "$SERVER", s.URL, "$NAME", "one")
	j2 := e2.Start(t, ddl, "$SERVER", s.URL, "$NAME", "two")
	// Both members subscribed: the server's count of the group's subscriptions.
	deadline := time.Now().Add(10 * time.Second)
	for s.Subscribers("q.*") < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	const n = 200
	for i := range n {
		nc.Publish(fmt.Sprintf("q.%d", i%3), fmt.Appendf(nil, `{"n":%d}`, i))
	}
	nc.Flush()
	deadline = time.Now().Add(10 * time.Second)
	for len(e1.Out.Lines("+I"))+len(e2.Out.Lines("+I")) < n && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	enginetest.Stop(t, j1)
	enginetest.Stop(t, j2)
	a, c := e1.Out.Lines("+I"), e2.Out.Lines("+I")
	if len(a) == 0 || len(c) == 0 {
		t.Errorf("one job got everything: %d and %d rows", len(a), len(c))
	}
	seen := map[string]int{}
	for _, l := range append(a, c...) {
		seen[l]++
	}
	for i := range n {
		if k := seen[fmt.Sprintf("+I[%d]", i)]; k != 1 {
			t.Errorf("message %d delivered %d times", i, k)
		}
	}
}

// jsJob is a job with durable state and checkpoints, named, so that a
// restart resumes it.
const jsJob = `
SET 'state.dir' = '$DIR';
SET 'pipeline.name' = 'js';
SET 'execution.checkpointing.interval' = '$CP';
CREATE TABLE m (n INT, seq BIGINT METADATA FROM 'sequence' VIRTUAL) WITH ('connector' = 'nats', 'servers' = '$SERVER',
  'jetstream.stream' = 'EV', 'subject' = 'ev.>', 'format' = 'json' $OPTS);
CREATE TABLE out (n INT, seq BIGINT) WITH ('connector' = 'print');
INSERT INTO out SELECT * FROM m;`

func jsStream(t testing.TB, s *natstest.Server) jetstream.JetStream {
	js := s.JetStream(t)
	natstest.CreateStream(t, js, jetstream.StreamConfig{Name: "EV", Subjects: []string{"ev.>"}})
	return js
}

func publishN(t testing.TB, js jetstream.JetStream, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		natstest.Publish(t, js, fmt.Sprintf("ev.%d", i%2), fmt.Sprintf(`{"n":%d}`, i))
	}
}

func wantRows(from, to int) []string {
	var w []string
	for i := from; i < to; i++ {
		w = append(w, fmt.Sprintf("+I[%d, %d]", i, i+1))
	}
	return w
}

// TestJetStreamOrderedResume: an ordered consumer's job stops and starts
// again: it reads on after the last row its checkpoint holds, nothing
// twice and nothing lost, with the stream sequence as a column.
func TestJetStreamOrderedResume(t *testing.T) {
	s := natstest.Start(t)
	js := jsStream(t, s)
	dir := t.TempDir()
	repl := []string{"$SERVER", s.URL, "$DIR", dir, "$CP", "50ms", "$OPTS", ""}
	publishN(t, js, 0, 20)
	e := enginetest.Open(t)
	j := e.Start(t, jsJob, repl...)
	e.Out.WaitLines(t, "+I", 20)
	enginetest.Stop(t, j)
	e.Close()
	publishN(t, js, 20, 40)
	e2 := enginetest.Open(t)
	j2 := e2.Start(t, jsJob, repl...)
	e2.Out.WaitLines(t, "+I", 20)
	publishN(t, js, 40, 50)
	e2.Out.WaitLines(t, "+I", 30)
	time.Sleep(100 * time.Millisecond) // anything more would be a duplicate
	enginetest.Stop(t, j2)
	got := append(e.Out.Lines("+I"), e2.Out.Lines("+I")...)
	if w := wantRows(0, 50); strings.Join(got, "\n") != strings.Join(w, "\n") {
		t.Errorf("got %d rows:\n%s\nwant 0..49 once each, in order", len(got), strings.Join(got, " "))
	}
}

// TestJetStreamDeliverPolicies starts ordered consumers by each policy.
func TestJetStreamDeliverPolicies(t *testing.T) {
	s := natstest.Start(t)
	js := jsStream(t, s)
	publishN(t, js, 0, 6)
	for _, c := range []struct {
		opts string
		want []string
	}{
		{"", wantRows(0, 6)},
		{", 'jetstream.deliver-policy' = 'last'", wantRows(5, 6)},
		{", 'jetstream.deliver-policy' = 'last-per-subject'", wantRows(4, 6)},
		{", 'jetstream.start-sequence' = '4'", wantRows(3, 6)},
		{", 'jetstream.start-time' = '" + time.Now().Add(time.Hour).UTC().Format(time.RFC3339) + "'", nil},
	} {
		e := enginetest.Open(t)
		j := e.Start(t, strings.NewReplacer("SET 'state.dir' = '$DIR';", "", "SET 'execution.checkpointing.interval' = '$CP';", "").Replace(jsJob),
			"$SERVER", s.URL, "$OPTS", c.opts)
		got := e.Out.WaitLines(t, "+I", len(c.want))
		time.Sleep(100 * time.Millisecond)
		enginetest.Stop(t, j)
		got = e.Out.Lines("+I")
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("%s: got %v, want %v", c.opts, got, c.want)
		}
	}
}

// durableJob counts rows per key: a stateful query, whose state drops
// rows at or below the offsets it has folded in.
const durableJob = `
SET 'state.dir' = '$DIR';
SET 'pipeline.name' = 'durable';
SET 'execution.checkpointing.interval' = '$CP';
CREATE TABLE m (n INT) WITH ('connector' = 'nats', 'servers' = '$SERVER',
  'jetstream.stream' = 'EV', 'subject' = 'ev.>', 'jetstream.durable' = 'job1', 'format' = 'json' $OPTS);
CREATE TABLE out (k INT, c BIGINT, s BIGINT) WITH ('connector' = 'print');
INSERT INTO out SELECT n % 2, COUNT(*), SUM(n) FROM m GROUP BY n % 2;`

// lastCounts returns the last +I/+U row per key of a GROUP BY k printout.
func lastCounts(lines []string) map[string]string {
	out := map[string]string{}
	for _, l := range lines {
		if !strings.HasPrefix(l, "+I[") && !strings.HasPrefix(l, "+U[") {
			continue
		}
		body := l[3 : len(l)-1]
		k, _, _ := strings.Cut(body, ", ")
		out[k] = body
	}
	return out
}

// TestJetStreamDurableAcksAfterCheckpoint: a durable consumer's messages
// are acknowledged only once a checkpoint holds them; a job cancelled
// before one completes leaves them unacknowledged, and the next run
// reads them again, in order, from the stream (not after the ack wait),
// while its state (restored from nothing) counts each once.
func TestJetStreamDurableAcksAfterCheckpoint(t *testing.T) {
	s := natstest.Start(t)
	js := jsStream(t, s)
	dir := t.TempDir()
	repl := []string{"$SERVER", s.URL, "$DIR", dir, "$CP", "1h", "$OPTS", ""}
	publishN(t, js, 0, 10)
	e := enginetest.Open(t)
	j := e.Start(t, durableJob, repl...)
	e.Out.WaitContains(t, "[1, 5, 25]")
	cons, err := js.Consumer(context.Background(), "EV", "job1")
	if err != nil {
		t.Fatal(err)
	}
	info, err := cons.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.AckFloor.Stream != 0 || info.NumAckPending != 10 {
		t.Errorf("before any checkpoint: ack floor %d, %d pending; want 0 and 10", info.AckFloor.Stream, info.NumAckPending)
	}
	j.Cancel() // as a crash: no checkpoint, no final commit
	<-j.Done()
	e.Close()
	publishN(t, js, 10, 12)
	e2 := enginetest.Open(t)
	repl[7] = ", 'jetstream.ack-wait' = '1h'" // a redelivery would come too late for the test
	j2 := e2.Start(t, durableJob, repl...)
	e2.Out.WaitContains(t, "[1, 6, 36]")
	enginetest.Stop(t, j2) // the final commit acknowledges everything
	got := lastCounts(e2.Out.Lines(""))
	if got["0"] != "0, 6, 30" || got["1"] != "1, 6, 36" {
		t.Errorf("got %v, want counts 6 and 6, sums 30 and 36", got)
	}
	info, err = cons.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.AckFloor.Stream != 12 || info.NumAckPending != 0 {
		t.Errorf("after the final commit: ack floor %d, %d pending; want 12 and 0", info.AckFloor.Stream, info.NumAckPending)
	}
}

// TestJetStreamDurableExactlyOnce: a job with checkpoints is cancelled
// after some completed; the next run resumes from its checkpoint: rows
// read after it come again from the durable consumer, and the state
// drops none and counts none twice.
func TestJetStreamDurableExactlyOnce(t *testing.T) {
	s := natstest.Start(t)
	js := jsStream(t, s)
	dir := t.TempDir()
	repl := []string{"$SERVER", s.URL, "$DIR", dir, "$CP", "30ms", "$OPTS", ", 'jetstream.ack-wait' = '1h'"}
	e := enginetest.Open(t)
	j := e.Start(t, durableJob, repl...)
	publishN(t, js, 0, 100)
	e.Out.WaitLines(t, "+U[1, 50, 2500]", 1)
	time.Sleep(100 * time.Millisecond) // some checkpoints complete
	publishN(t, js, 100, 120)
	e.Out.WaitLines(t, "+U[1, 60, 3600]", 1)
	j.Cancel() // the last rows are likely after the last checkpoint
	<-j.Done()
	e.Close()
	publishN(t, js, 120, 130)
	e2 := enginetest.Open(t)
	j2 := e2.Start(t, durableJob, repl...)
	e2.Out.WaitLines(t, "+U[1, 65, 4225]", 1)
	enginetest.Stop(t, j2)
	got := lastCounts(e2.Out.Lines(""))
	if got["0"] != "0, 65, 4160" || got["1"] != "1, 65, 4225" {
		t.Errorf("got %v, want counts 65 and 65, sums 4160 and 4225\nlog:\n%s", got, e2.Log)
	}
}

// TestJetStreamSinkExactlyOnce writes through a job with checkpoints:
// each row once in the stream, with a message ID.
func TestJetStreamSinkExactlyOnce(t *testing.T) {
	s := natstest.Start(t)
	js := s.JetStream(t)
	natstest.CreateStream(t, js, jetstream.StreamConfig{Name: "OUT", Subjects: []string{"out.>"}})
	e := enginetest.Open(t)
	j := e.Start(t, `
SET 'state.dir' = '$DIR';
SET 'execution.checkpointing.interval' = '20ms';
CREATE TABLE src (n INT) WITH ('connector' = 'datagen', 'number-of-rows' = '500', 'fields.n.kind' = 'sequence', 'fields.n.start' = '1', 'fields.n.end' = '500');
CREATE TABLE snk (n INT) WITH ('connector' = 'nats', 'servers' = '$SERVER', 'jetstream.stream' = 'OUT', 'subject' = 'out.n', 'format' = 'json');
INSERT INTO snk SELECT * FROM src;`, "$SERVER", s.URL, "$DIR", t.TempDir())
	if err := enginetest.WaitErr(t, j); err != nil {
		t.Fatal(err)
	}
	msgs := natstest.ReadStream(t, js, "OUT")
	if len(msgs) != 500 {
		t.Fatalf("%d messages in the stream, want 500", len(msgs))
	}
	ids := map[string]bool{}
	for i, m := range msgs {
		if want := fmt.Sprintf(`{"n":%d}`, i+1); m.Data != want {
			t.Fatalf("message %d is %s, want %s", i, m.Data, want)
		}
		id := m.Header.Get("Nats-Msg-Id")
		if id == "" || ids[id] {
			t.Fatalf("message %d has ID %q (seen before: %v)", i, id, ids[id])
		}
		ids[id] = true
	}
}

// TestJetStreamSinkAtLeastOnce publishes as rows come, in a job without
// checkpoints.
func TestJetStreamSinkAtLeastOnce(t *testing.T) {
	s := natstest.Start(t)
	js := s.JetStream(t)
	natstest.CreateStream(t, js, jetstream.StreamConfig{Name: "OUT", Subjects: []string{"out.>"}})
	e := enginetest.Open(t)
	j := e.Start(t, `
CREATE TABLE src (n INT) WITH ('connector' = 'datagen', 'number-of-rows' = '300', 'fields.n.kind' = 'sequence', 'fields.n.start' = '1', 'fields.n.end' = '300');
CREATE TABLE snk (n INT) WITH ('connector' = 'nats', 'servers' = '$SERVER', 'jetstream.stream' = 'OUT', 'subject' = 'out.n', 'format' = 'json',
  'sink.delivery-guarantee' = 'at-least-once');
INSERT INTO snk SELECT * FROM src;`, "$SERVER", s.URL)
	if err := enginetest.WaitErr(t, j); err != nil {
		t.Fatal(err)
	}
	if msgs := natstest.ReadStream(t, js, "OUT"); len(msgs) != 300 || msgs[299].Data != `{"n":300}` {
		t.Fatalf("%d messages in the stream, want 300", len(msgs))
	}
}

// TestJetStreamSinkWrongSubject: a subject the stream does not take is
// refused before anything is written.
func TestJetStreamSinkWrongSubject(t *testing.T) {
	s := natstest.Start(t)
	js := s.JetStream(t)
	natstest.CreateStream(t, js, jetstream.StreamConfig{Name: "OUT", Subjects: []string{"out.>"}})
	e := enginetest.Open(t)
	j := e.Start(t, `
CREATE TABLE src (n INT) WITH ('connector' = 'datagen', 'number-of-rows' = '3');
CREATE TABLE snk (n INT) WITH ('connector' = 'nats', 'servers' = '$SERVER', 'jetstream.stream' = 'OUT', 'subject' = 'other.n', 'format' = 'json');
INSERT INTO snk SELECT * FROM src;`, "$SERVER", s.URL)
	err := enginetest.WaitErr(t, j)
	if err == nil || !strings.Contains(err.Error(), "stream 'OUT' does not take subject 'other.n' (its subjects: out.>)") {
		t.Errorf("got %v", err)
	}
	j = e.Start(t, `
CREATE TABLE src2 (n INT) WITH ('connector' = 'datagen', 'number-of-rows' = '3');
CREATE TABLE snk2 (n INT) WITH ('connector' = 'nats', 'servers' = '$SERVER', 'jetstream.stream' = 'NOPE', 'subject' = 'out.n', 'format' = 'json');
INSERT INTO snk2 SELECT * FROM src2;`, "$SERVER", s.URL)
	err = enginetest.WaitErr(t, j)
	if err == nil || !strings.Contains(err.Error(), "has no stream 'NOPE'") {
		t.Errorf("got %v", err)
	}
}

// TestCoreSink publishes to a subject a subscriber reads.
func TestCoreSink(t *testing.T) {
	s := natstest.Start(t)
	nc := s.Conn(t)
	sub, err := nc.SubscribeSync("alerts.hot")
	if err != nil {
		t.Fatal(err)
	}
	nc.Flush()
	e := enginetest.Open(t)
	j := e.Start(t, `
CREATE TABLE src (n INT) WITH ('connector' = 'datagen', 'number-of-rows' = '50', 'fields.n.kind' = 'sequence', 'fields.n.start' = '1', 'fields.n.end' = '50');
CREATE TABLE snk (n INT) WITH ('connector' = 'nats', 'servers' = '$SERVER', 'subject' = 'alerts.hot', 'format' = 'json');
INSERT INTO snk SELECT * FROM src WHERE n % 10 = 0;`, "$SERVER", s.URL)
	if err := enginetest.WaitErr(t, j); err != nil {
		t.Fatal(err)
	}
	var got []string
	for range 5 {
		m, err := sub.NextMsg(5 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(m.Data))
	}
	if w := `{"n":10} {"n":20} {"n":30} {"n":40} {"n":50}`; strings.Join(got, " ") != w {
		t.Errorf("got %v, want %s", got, w)
	}
}

// TestSourceMalformed applies each bad-record policy to a payload that
// is not JSON.
func TestSourceMalformed(t *testing.T) {
	const ddl = `
CREATE TABLE m (n INT) WITH ('connector' = 'nats', 'servers' = '$SERVER', 'jetstream.stream' = 'EV', 'subject' = 'ev.>', 'format' = 'json' $OPTS);
CREATE TABLE out (n INT) WITH ('connector' = 'print');
INSERT INTO out SELECT * FROM m;`
	setup := func(t *testing.T) *natstest.Server {
		s := natstest.Start(t)
		js := jsStream(t, s)
		natstest.Publish(t, js, "ev.a", `{"n":1}`, `not json`, `{"n":3}`)
		return s
	}
	t.Run("fail", func(t *testing.T) {
		s := setup(t)
		e := enginetest.Open(t)
		err := enginetest.WaitErr(t, e.Start(t, ddl, "$SERVER", s.URL, "$OPTS", ""))
		if err == nil || !strings.Contains(err.Error(), "source m: subject 'ev.a' stream sequence 2: cannot decode record") {
			t.Errorf("got %v", err)
		}
	})
	t.Run("skip", func(t *testing.T) {
		s := setup(t)
		e := enginetest.Open(t)
		j := e.Start(t, ddl, "$SERVER", s.URL, "$OPTS", ", 'json.ignore-parse-errors' = 'true'")
		e.Out.WaitLines(t, "+I", 2)
		enginetest.Stop(t, j)
		if got := strings.Join(e.Out.Lines("+I"), " "); got != "+I[1] +I[3]" {
			t.Errorf("got %s", got)
		}
	})
	t.Run("dead-letter", func(t *testing.T) {
		s := setup(t)
		e := enginetest.Open(t)
		dl := filepath.Join(t.TempDir(), "dead.txt")
		j := e.Start(t, ddl, "$SERVER", s.URL, "$OPTS", ", 'dead-letter.path' = '"+dl+"'")
		e.Out.WaitLines(t, "+I", 2)
		enginetest.Stop(t, j)
		if got := strings.Join(e.Out.Lines("+I"), " "); got != "+I[1] +I[3]" {
			t.Errorf("got %s", got)
		}
		if data, _ := os.ReadFile(dl); string(data) != "not json\n" {
			t.Errorf("dead letters: %q", data)
		}
	})
}

// TestServerDownAtStart: with no server, a source and a sink fail after
// 'connect.timeout' with an error that names the servers.
func TestServerDownAtStart(t *testing.T) {
	s := natstest.Start(t)
	s.Stop()
	e := enginetest.Open(t)
	j := e.Start(t, `
CREATE TABLE m (n INT) WITH ('connector' = 'nats', 'servers' = '$SERVER', 'subject' = 't', 'format' = 'json', 'connect.timeout' = '300 ms');
CREATE TABLE out (n INT) WITH ('connector' = 'print');
INSERT INTO out SELECT * FROM m;`, "$SERVER", s.URL)
	err := enginetest.WaitErr(t, j)
	want := "nats table 'm': cannot connect to " + s.URL + " within 300ms ('connect.timeout')"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("source: got %v\nwant %s", err, want)
	}
	j = e.Start(t, `
CREATE TABLE src (n INT) WITH ('connector' = 'datagen', 'number-of-rows' = '10');
CREATE TABLE snk (n INT) WITH ('connector' = 'nats', 'servers' = '$SERVER', 'subject' = 't', 'format' = 'json', 'connect.timeout' = '300 ms');
INSERT INTO snk SELECT * FROM src;`, "$SERVER", s.URL)
	err = enginetest.WaitErr(t, j)
	want = "nats table 'snk': cannot connect to " + s.URL + " within 300ms ('connect.timeout')"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("sink: got %v\nwant %s", err, want)
	}
}

// TestAuthRefused: bad credentials fail the job at once, saying so and
// not showing the password; the right ones work.
func TestAuthRefused(t *testing.T) {
	s := natstest.Start(t, natstest.WithUser("edge", "secret"))
	e := enginetest.Open(t)
	j := e.Start(t, `
CREATE TABLE m (n INT) WITH ('connector' = 'nats', 'servers' = '$SERVER', 'subject' = 't', 'format' = 'json',
  'username' = 'edge', 'password' = 'wrong');
CREATE TABLE out (n INT) WITH ('connector' = 'print');
INSERT INTO out SELECT * FROM m;`, "$SERVER", s.URL)
	err := enginetest.WaitErr(t, j)
	if err == nil || !strings.Contains(err.Error(), "nats table 'm': cannot connect to "+s.URL+": nats: Authorization Violation") {
		t.Errorf("got %v", err)
	}
	if err != nil && strings.Contains(err.Error(), "wrong") {
		t.Errorf("the password shows in %v", err)
	}
	j = e.Start(t, `
CREATE TABLE m2 (n INT) WITH ('connector' = 'nats', 'servers' = '$SERVER', 'subject' = 't', 'format' = 'json',
  'username' = 'edge', 'password' = 'secret');
CREATE TABLE out2 (n INT) WITH ('connector' = 'print');
INSERT INTO out2 SELECT * FROM m2;`, "$SERVER", s.URL)
	nc := s.Conn(t)
	deadline := time.Now().Add(10 * time.Second)
	for len(e.Out.Lines("+I[7]")) == 0 && time.Now().Before(deadline) {
		nc.Publish("t", []byte(`{"n":7}`))
		nc.Flush()
		time.Sleep(20 * time.Millisecond)
	}
	enginetest.Stop(t, j)
	if len(e.Out.Lines("+I[7]")) == 0 {
		t.Errorf("nothing read with the right password; log:\n%s", e.Log)
	}
}

// TestReconnectCounted restarts the server under a running job: the
// ordered consumer's source connects again by itself, which the job's
// metrics count, and reads on without a gap or a duplicate.
func TestReconnectCounted(t *testing.T) {
	s := natstest.Start(t)
	js := jsStream(t, s)
	e := enginetest.Open(t)
	j := e.Start(t, strings.NewReplacer("SET 'state.dir' = '$DIR';", "", "SET 'execution.checkpointing.interval' = '$CP';", "").Replace(jsJob),
		"$SERVER", s.URL, "$OPTS", ", 'reconnect.initial-backoff' = '10 ms', 'reconnect.max-backoff' = '50 ms'")
	publishN(t, js, 0, 5)
	e.Out.WaitLines(t, "+I", 5)
	s.Stop()
	s.Restart()
	js = s.JetStream(t)
	publishN(t, js, 5, 10)
	got := e.Out.WaitLines(t, "+I", 10)
	time.Sleep(100 * time.Millisecond)
	n := j.Health().Reconnects
	enginetest.Stop(t, j)
	got = e.Out.Lines("+I")
	if w := wantRows(0, 10); strings.Join(got, " ") != strings.Join(w, " ") {
		t.Errorf("got %v\nwant %v\nlog:\n%s", got, w, e.Log)
	}
	if n < 1 {
		t.Errorf("%d reconnections counted", n)
	}
	if !strings.Contains(e.Log.String(), "lost the connection to "+s.URL) {
		t.Errorf("log:\n%s", e.Log)
	}
}

// TestJetStreamDurableCatchUp: where the server cannot move a durable
// consumer back (its deliver policy is 'new'), what it delivered to a
// crashed run is read from the stream directly, in order, ahead of
// newer messages, and its redeliveries are skipped.
func TestJetStreamDurableCatchUp(t *testing.T) {
	s := natstest.Start(t)
	js := jsStream(t, s)
	ctx := context.Background()
	if _, err := js.CreateConsumer(ctx, "EV", jetstream.ConsumerConfig{Durable: "job1", FilterSubject: "ev.>",
		DeliverPolicy: jetstream.DeliverNewPolicy, AckPolicy: jetstream.AckExplicitPolicy, AckWait: time.Second}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	repl := []string{"$SERVER", s.URL, "$DIR", dir, "$CP", "1h", "$OPTS", ""}
	publishN(t, js, 0, 10)
	e := enginetest.Open(t)
	j := e.Start(t, durableJob, repl...)
	e.Out.WaitContains(t, "[1, 5, 25]")
	j.Cancel()
	<-j.Done()
	e.Close()
	publishN(t, js, 10, 12)
	e2 := enginetest.Open(t)
	j2 := e2.Start(t, durableJob, repl...)
	e2.Out.WaitContains(t, "[1, 6, 36]")
	time.Sleep(1500 * time.Millisecond) // the ack wait passes: 0..9 come again, and are skipped
	enginetest.Stop(t, j2)
	got := lastCounts(e2.Out.Lines(""))
	if got["0"] != "0, 6, 30" || got["1"] != "1, 6, 36" {
		t.Errorf("got %v, want counts 6 and 6, sums 30 and 36\nlog:\n%s", got, e2.Log)
	}
	if !strings.Contains(e2.Log.String(), "reading what it delivered to an earlier run from the stream instead") {
		t.Errorf("log:\n%s", e2.Log)
	}
	cons, err := js.Consumer(ctx, "EV", "job1")
	if err != nil {
		t.Fatal(err)
	}
	info, err := cons.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.AckFloor.Stream != 12 || info.NumAckPending != 0 {
		t.Errorf("after the final commit: ack floor %d, %d pending; want 12 and 0", info.AckFloor.Stream, info.NumAckPending)
	}
}
