package nats_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/connector/format/json"
	"github.com/sluicesql/sluice/connector/nats"
	"github.com/sluicesql/sluice/internal/natstest"
	"github.com/sluicesql/sluice/types"
)

type statefulSink interface {
	connector.Sink
	connector.StatefulSink
}

func newSink(t *testing.T, url string) statefulSink {
	t.Helper()
	f := format.NewRegistry()
	f.Register(json.New())
	schema := types.Schema{Columns: []types.Column{{Name: "n", Type: types.Type{Kind: types.KindInt}}}}
	s, err := nats.Factory{}.CreateSink(connector.Table{Name: "snk", Schema: schema, Options: connector.Options{
		"connector": "nats", "servers": url, "jetstream.stream": "OUT", "subject": "out.n", "format": "json"}}, connector.Env{Formats: f})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s.(statefulSink)
}

func write(t *testing.T, s connector.Sink, from, to int) {
	t.Helper()
	b := &types.Batch{}
	for i := from; i < to; i++ {
		b.AddRow(types.Insert, types.Origin{}, 1)[0] = types.IntValue(types.KindInt, int64(i))
	}
	if err := s.Write(context.Background(), b); err != nil {
		t.Fatal(err)
	}
}

// TestSinkRestorePublishesOnce: the rows a checkpoint prepared are in its
// snapshot; a sink restored from it publishes them (the crash came
// before the commit), and one restored from it again publishes nothing
// new: the stream drops them by their message IDs.
func TestSinkRestorePublishesOnce(t *testing.T) {
	srv := natstest.Start(t)
	js := srv.JetStream(t)
	natstest.CreateStream(t, js, jetstream.StreamConfig{Name: "OUT", Subjects: []string{"out.>"}})
	ctx := context.Background()

	s1 := newSink(t, srv.URL)
	if err := s1.Restore(ctx, connector.SinkRestore{Owner: "o", Checkpointed: true}); err != nil {
		t.Fatal(err)
	}
	write(t, s1, 0, 10)
	if err := s1.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	write(t, s1, 10, 15)
	if err := s1.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	snap, err := s1.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(natstest.ReadStream(t, js, "OUT")); n != 0 {
		t.Fatalf("%d messages published before the commit", n)
	}
	// Half of it went out before the crash.
	if err := s1.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		s := newSink(t, srv.URL)
		if err := s.Restore(ctx, connector.SinkRestore{Owner: "o", Snapshot: snap, Checkpointed: true}); err != nil {
			t.Fatalf("restore %d: %v", i, err)
		}
		msgs := natstest.ReadStream(t, js, "OUT")
		if len(msgs) != 15 {
			t.Fatalf("restore %d: %d messages in the stream, want 15", i, len(msgs))
		}
		for k, m := range msgs {
			if want := fmt.Sprintf(`{"n":%d}`, k); m.Data != want {
				t.Fatalf("message %d is %s, want %s", k, m.Data, want)
			}
		}
		// The restored sink numbers its next checkpoint after the
		// snapshot's: new rows are new messages.
		if i == 1 {
			write(t, s, 15, 17)
			if err := s.Prepare(ctx); err != nil {
				t.Fatal(err)
			}
			if err := s.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if n := len(natstest.ReadStream(t, js, "OUT")); n != 17 {
				t.Fatalf("%d messages, want 17", n)
			}
		}
	}
}

// TestSinkSnapshotCorrupt: a snapshot that does not decode is an error,
// not a panic.
func TestSinkSnapshotCorrupt(t *testing.T) {
	s := newSink(t, "nats://127.0.0.1:1")
	for _, snap := range [][]byte{{9}, {1}, {1, 4, 'a'}, {1, 1, 'a', 1, 5, 1}} {
		if err := s.Restore(context.Background(), connector.SinkRestore{Snapshot: snap, Checkpointed: true}); err == nil {
			t.Errorf("%v: no error", snap)
		}
	}
}
