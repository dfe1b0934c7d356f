package interop_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// natsURL returns the server of SLUICE_NATS_URL (nats://127.0.0.1:4222,
// the machine's nats-server with JetStream), or skips.
func natsURL(t *testing.T) string {
	url := os.Getenv("SLUICE_NATS_URL")
	if url == "" {
		t.Skip("set SLUICE_NATS_URL (e.g. nats://127.0.0.1:4222) to test the nats connector against a nats-server")
	}
	return url
}

// natsJS connects to the server and makes a stream of its own (deleted
// when the test ends) for each name, taking subjects name.>.
func natsJS(t *testing.T, url string, names ...string) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, n := range names {
		js.DeleteStream(ctx, n)
		if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: n, Subjects: []string{strings.ToLower(n) + ".>"}, Storage: jetstream.MemoryStorage}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { js.DeleteStream(context.Background(), n) })
	}
	t.Logf("nats-server %s", nc.ConnectedServerVersion())
	return nc, js
}

// TestNATSJetStreamRoundTrip: a durable consumer's job is cancelled
// before any checkpoint and started again: the server (which may be too
// old to move a consumer back) has what it delivered pending, and the
// restarted job reads it from the stream, in order, so that its counts
// are exact; its exactly-once sink publishes each result once, with a
// message ID.
func TestNATSJetStreamRoundTrip(t *testing.T) {
	url := natsURL(t)
	suffix := fmt.Sprint(time.Now().UnixNano() % 1e9)
	in, out := "SLUICEIN"+suffix, "SLUICEOUT"+suffix
	_, js := natsJS(t, url, in, out)
	ctx := context.Background()
	pub := func(from, to int) {
		for i := from; i < to; i++ {
			if _, err := js.Publish(ctx, fmt.Sprintf("%s.%d", strings.ToLower(in), i%2), fmt.Appendf(nil, `{"n":%d}`, i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	const job = `
SET 'state.dir' = '$DIR';
SET 'pipeline.name' = 'nats-interop';
SET 'execution.checkpointing.interval' = '1h';
CREATE TABLE m (n INT, seq BIGINT METADATA FROM 'sequence' VIRTUAL) WITH ('connector' = 'nats', 'servers' = '$URL',
  'jetstream.stream' = '$IN', 'jetstream.durable' = 'interop', 'jetstream.ack-wait' = '1h', 'format' = 'json');
CREATE TABLE counts (k INT, c BIGINT, s BIGINT) WITH ('connector' = 'print');
INSERT INTO counts SELECT n % 2, COUNT(*), SUM(n) FROM m GROUP BY n % 2;`
	repl := []string{"$URL", url, "$IN", in, "$DIR", t.TempDir()}
	pub(0, 10)
	e := openEngine(t)
	j := e.start(t, job, repl...)
	waitLine(t, e.out, "[1, 5, 25]")
	j.Cancel()
	<-j.Done()
	e.Close()
	pub(10, 12)
	e2 := openEngine(t)
	j2 := e2.start(t, job, repl...)
	waitLine(t, e2.out, "[1, 6, 36]")
	finish(t, j2, true)
	if got := allLines(e2.out); !strings.Contains(got, "[0, 6, 30]") || strings.Contains(got, "[1, 7,") || strings.Contains(got, "[0, 7,") {
		t.Errorf("restarted job's counts:\n%s", got)
	}

	// The sink.
	e3 := openEngine(t)
	j3 := e3.start(t, `
SET 'state.dir' = '$DIR';
SET 'execution.checkpointing.interval' = '50ms';
CREATE TABLE g (n INT) WITH ('connector' = 'datagen', 'fields.n.kind' = 'sequence', 'fields.n.start' = '1', 'fields.n.end' = '200');
CREATE TABLE p (n INT) WITH ('connector' = 'nats', 'servers' = '$URL', 'jetstream.stream' = '$OUT', 'subject' = '$SUBJ', 'format' = 'json');
INSERT INTO p SELECT * FROM g;`, "$URL", url, "$OUT", out, "$SUBJ", strings.ToLower(out)+".n", "$DIR", t.TempDir())
	finish(t, j3, false)
	st, err := js.Stream(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	for seq := uint64(1); seq <= 201; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if seq == 201 {
			if err == nil {
				t.Errorf("a message %d: %s", seq, m.Data)
			}
			break
		}
		if err != nil {
			t.Fatalf("message %d: %v", seq, err)
		}
		if want := fmt.Sprintf(`{"n":%d}`, seq); string(m.Data) != want || m.Header.Get("Nats-Msg-Id") == "" {
			t.Fatalf("message %d: %s (ID %q), want %s with an ID", seq, m.Data, m.Header.Get("Nats-Msg-Id"), want)
		}
	}
}

// TestNATSCoreRules: core NATS subjects with wildcards into rules whose
// alerts go out on core subjects a subscriber reads.
func TestNATSCoreRules(t *testing.T) {
	url := natsURL(t)
	nc, _ := natsJS(t, url)
	prefix := fmt.Sprintf("sluice%d", time.Now().UnixNano()%1e9)
	sub, err := nc.SubscribeSync(prefix + ".alerts.>")
	if err != nil {
		t.Fatal(err)
	}
	e := openEngine(t)
	j := e.start(t, `
CREATE TABLE readings (device STRING, temp DOUBLE, subj STRING METADATA FROM 'subject' VIRTUAL)
  WITH ('connector' = 'nats', 'servers' = '$URL', 'subject' = '$P.devices.*.data', 'format' = 'json');
CREATE TABLE hot (device STRING, temp DOUBLE, subj STRING) WITH ('connector' = 'nats', 'servers' = '$URL', 'subject' = '$P.alerts.hot', 'format' = 'json');
INSERT INTO hot SELECT * FROM readings WHERE temp > 30;`, "$URL", url, "$P", prefix)
	deadline := time.Now().Add(20 * time.Second)
	var got *nats.Msg
	for got == nil && time.Now().Before(deadline) {
		// Until the job has subscribed, what is published is lost
		// (core NATS keeps nothing): publish until an alert comes.
		nc.Publish(prefix+".devices.d1.data", []byte(`{"device":"d1","temp":10}`))
		nc.Publish(prefix+".devices.d2.data", []byte(`{"device":"d2","temp":35}`))
		nc.Flush()
		got, _ = sub.NextMsg(100 * time.Millisecond)
	}
	finish(t, j, true)
	if want := `{"device":"d2","temp":35.0,"subj":"` + prefix + `.devices.d2.data"}`; got == nil || string(got.Data) != want {
		t.Errorf("got %v, want %s", got, want)
	}
}

func allLines(l *lockedBuffer) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func waitLine(t *testing.T, l *lockedBuffer, line string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(allLines(l), line) {
		if time.Now().After(deadline) {
			t.Fatalf("no line %s in:\n%s", line, allLines(l))
		}
		time.Sleep(10 * time.Millisecond)
	}
}
