package mqtt_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/connector/format/json"
	"github.com/sluicesql/sluice/connector/mqtt"
	"github.com/sluicesql/sluice/internal/logtest"
	"github.com/sluicesql/sluice/internal/mqtttest"
	"github.com/sluicesql/sluice/types"
)

func newSink(t testing.TB, opts connector.Options, log *logtest.Lines) *mqtt.Sink {
	t.Helper()
	f := format.NewRegistry()
	f.Register(json.New())
	o := connector.Options{"connector": "mqtt", "format": "json", "qos": "1",
		"reconnect.initial-backoff": "10 ms", "reconnect.max-backoff": "50 ms"}
	for k, v := range opts {
		o[k] = v
	}
	schema := types.Schema{Columns: []types.Column{{Name: "n", Type: types.Type{Kind: types.KindInt}}}}
	env := connector.Env{Formats: f, Job: "j"}
	if log != nil {
		env.Logf = log.Logf
	}
	s, err := mqtt.Factory{}.CreateSink(connector.Table{Name: "out", Schema: schema, Options: o}, env)
	if err != nil {
		t.Fatal(err)
	}
	return s.(*mqtt.Sink)
}

// write writes rows from..to-1 and flushes.
func write(t testing.TB, s connector.Sink, from, to int) {
	t.Helper()
	b := &types.Batch{}
	for i := from; i < to; i++ {
		b.AddRow(types.Insert, types.Origin{}, 1)[0] = types.IntValue(types.KindInt, int64(i))
	}
	if err := s.Write(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// numbers returns the n of each message, each once, in the order they
// first came; and whether any came twice.
func numbers(t testing.TB, msgs []mqtttest.Message) (order []int, dup int) {
	seen := map[int]bool{}
	for _, m := range msgs {
		var n int
		if _, err := fmt.Sscanf(m.Payload, `{"n":%d}`, &n); err != nil {
			t.Fatalf("message %q", m.Payload)
		}
		if seen[n] {
			dup++
			continue
		}
		seen[n] = true
		order = append(order, n)
	}
	return order, dup
}

// inOrder checks that got is from..to-1 in order.
func inOrder(t testing.TB, got []int, from, to int) {
	t.Helper()
	if len(got) != to-from {
		t.Fatalf("got %d messages, want %d: %v", len(got), to-from, got)
	}
	for i, n := range got {
		if n != from+i {
			t.Fatalf("message %d is %d, want %d (out of order or missing): %v", i, n, from+i, got)
		}
	}
}

// TestSinkStoreAndForward stops the broker while a sink writes: what it
// cannot deliver goes to its buffer on disk, kept across a restart of the
// sink (a new job run), and delivered in order once the broker is back.
func TestSinkStoreAndForward(t *testing.T) {
	for _, v := range []string{"5", "3.1.1"} {
		for _, qos := range []string{"1", "2"} {
			t.Run(v+"/qos"+qos, func(t *testing.T) {
				b := mqtttest.Start(t)
				dir := t.TempDir()
				log := &logtest.Lines{}
				t.Cleanup(func() {
					if t.Failed() {
						t.Logf("log:\n%s", log)
					}
				})
				opts := connector.Options{"server": b.URL, "topic": "out", "protocol-version": v, "qos": qos, "sink.buffer.dir": dir,
					"sink.flush-timeout": "2 s"}
				got := b.Collect("out")
				s := newSink(t, opts, log)
				write(t, s, 0, 100)
				if m := got.Wait(100, 10*time.Second); len(m) < 100 {
					t.Fatalf("%d of 100 delivered while the broker is up", len(m))
				}
				b.Stop()
				write(t, s, 100, 200) // buffered
				write(t, s, 200, 300)
				if err := s.Close(); err != nil { // the broker is still down: kept on disk
					t.Fatal(err)
				}
				if !strings.Contains(log.String(), "stay in "+dir) {
					t.Errorf("log:\n%s", log)
				}
				// The next run: messages written while the broker is still
				// down go after the buffered ones.
				s = newSink(t, opts, log)
				write(t, s, 300, 350)
				b.Restart()
				got2 := b.Collect("out")
				write(t, s, 350, 400)
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				first, dup1 := numbers(t, got.Messages())
				inOrder(t, first, 0, 100)
				// The broker may have passed on messages whose
				// acknowledgement the stop cut off: those come again, first.
				second, dup2 := numbers(t, got2.Wait(300, 10*time.Second))
				for len(second) > 0 && second[0] < 100 {
					second, dup2 = second[1:], dup2+1
				}
				inOrder(t, second, 100, 400)
				if dup1+dup2 > 0 {
					t.Logf("%d duplicates (at-least-once)", dup1+dup2)
				}
				// Nothing left for a third run.
				s = newSink(t, opts, log)
				write(t, s, 400, 401)
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				third, _ := numbers(t, got2.Wait(301+dup2, 10*time.Second))
				for len(third) > 0 && third[0] < 100 {
					third = third[1:]
				}
				inOrder(t, third, 100, 401)
			})
		}
	}
}

// TestSinkBufferOverflow: a full buffer fails the sink, or with
// 'drop-oldest' drops the oldest messages and counts them.
func TestSinkBufferOverflow(t *testing.T) {
	b := mqtttest.Start(t)
	t.Run("fail", func(t *testing.T) {
		s := newSink(t, connector.Options{"server": b.URL, "topic": "o", "sink.buffer.dir": t.TempDir(), "sink.buffer.max-size": "1 kb"}, nil)
		write(t, s, 0, 1)
		b.Stop()
		defer b.Restart()
		bt := &types.Batch{}
		for i := range 200 {
			bt.AddRow(types.Insert, types.Origin{}, 1)[0] = types.IntValue(types.KindInt, int64(i))
		}
		err := s.Write(context.Background(), bt)
		if err == nil {
			err = s.Flush(context.Background())
		}
		if err == nil || !strings.Contains(err.Error(), "the store-and-forward buffer is full") || !strings.Contains(err.Error(), "'sink.buffer.overflow' = 'drop-oldest'") {
			t.Errorf("got %v", err)
		}
		s.Close()
	})
	t.Run("drop-oldest", func(t *testing.T) {
		log := &logtest.Lines{}
		s := newSink(t, connector.Options{"server": b.URL, "topic": "o", "sink.buffer.dir": t.TempDir(), "sink.buffer.max-size": "1 kb",
			"sink.buffer.overflow": "drop-oldest"}, log)
		write(t, s, 0, 1)
		b.Stop()
		write(t, s, 1, 201)
		if s.Dropped() == 0 {
			t.Fatal("nothing dropped")
		}
		b.Restart()
		got := b.Collect("o")
		write(t, s, 201, 202)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		msgs, _ := numbers(t, got.Wait(202-1-int(s.Dropped()), 10*time.Second))
		// The newest survive, in order, up to 201.
		if len(msgs) == 0 || msgs[len(msgs)-1] != 201 {
			t.Fatalf("got %v", msgs)
		}
		inOrder(t, msgs, 202-len(msgs), 202)
		// A message being sent when it was dropped may still arrive.
		if int64(len(msgs)) < 201-s.Dropped() {
			t.Errorf("%d delivered and %d dropped of 201", len(msgs), s.Dropped())
		}
		if !strings.Contains(log.String(), "dropped its oldest message") {
			t.Errorf("log:\n%s", log)
		}
	})
}

// TestSinkNoBufferDirLosesNothingSilently: without a buffer directory, a
// sink whose broker never returns fails at its end rather than losing
// messages quietly.
func TestSinkNoBufferDirLosesNothingSilently(t *testing.T) {
	b := mqtttest.Start(t)
	s := newSink(t, connector.Options{"server": b.URL, "topic": "o", "sink.flush-timeout": "200 ms"}, nil)
	write(t, s, 0, 1)
	b.Stop()
	write(t, s, 1, 5)
	err := s.Close()
	if err == nil || !strings.Contains(err.Error(), "could not be delivered") || !strings.Contains(err.Error(), "are lost") {
		t.Errorf("got %v", err)
	}
}
