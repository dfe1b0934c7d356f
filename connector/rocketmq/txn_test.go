package rocketmq

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/format"
	jsonformat "github.com/sluicesql/sluice/connector/format/json"
	"github.com/sluicesql/sluice/internal/rocketmqfake"
	"github.com/sluicesql/sluice/types"
)

func txnSink(t *testing.T, s *rocketmqfake.Server, r connector.SinkRestore) *TxnSink {
	t.Helper()
	formats := format.NewRegistry()
	if err := formats.Register(jsonformat.New()); err != nil {
		t.Fatal(err)
	}
	tbl := connector.Table{Name: "out", Schema: types.Schema{Columns: []types.Column{{Name: "n", Type: types.Type{Kind: types.KindInt}}}},
		Options: connector.Options{"connector": "rocketmq", "endpoints": s.Addr(), "topic": "out", "format": "json",
			"sink.delivery-guarantee": "exactly-once"}}
	sk, err := Factory{}.CreateSink(tbl, connector.Env{Formats: formats, Job: "job"})
	if err != nil {
		t.Fatal(err)
	}
	ts := sk.(*TxnSink)
	if err := ts.Restore(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	return ts
}

func write(t *testing.T, s *TxnSink, from, to int) {
	t.Helper()
	b := &types.Batch{}
	for i := from; i < to; i++ {
		vals := b.AddRow(types.Insert, types.Origin{}, 1)
		vals[0] = types.IntValue(types.KindInt, int64(i))
	}
	if err := s.Write(context.Background(), b); err != nil {
		t.Fatal(err)
	}
}

func bodies(s *rocketmqfake.Server) string {
	var out []string
	for _, m := range s.Messages("out") {
		out = append(out, string(m.Body))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// TestTxnRecoveredAfterCrash: a run prepares an interval for a checkpoint
// that completes but dies before its commit, with half messages of the
// next interval sent too. The next run, restored from that checkpoint,
// commits the first interval, at once from the snapshot's list ("restore")
// or, without it, by answering the proxy's checks ("checks"); the second
// interval is rolled back by the checks, and nothing else appears.
func TestTxnRecoveredAfterCrash(t *testing.T) {
	for _, how := range []string{"restore", "checks"} {
		t.Run(how, func(t *testing.T) {
			s, err := rocketmqfake.Start(rocketmqfake.Options{TransactionCheckAfter: 100 * time.Millisecond, TransactionCheckInterval: 50 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			restore := connector.SinkRestore{Owner: "sink-1", Checkpointed: true}

			run1 := txnSink(t, s, restore)
			write(t, run1, 0, 5)
			if err := run1.Prepare(ctx); err != nil { // checkpoint 1's barrier
				t.Fatal(err)
			}
			snap, err := run1.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			write(t, run1, 5, 8) // after the barrier: no checkpoint covers them
			if err := run1.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			// Checkpoint 1 completes, and the process dies before Commit:
			// its producer goes away with its half messages unresolved.
			run1.chk.close()
			run1.prod.GracefulStop()
			time.Sleep(300 * time.Millisecond) // checks find no producer meanwhile
			if n := s.HalfMessages("out"); n != 8 {
				t.Fatalf("%d half messages after the crash, want 8", n)
			}
			if b := bodies(s); b != "" {
				t.Fatalf("visible before any commit: %s", b)
			}
			if how == "checks" {
				var sn txnSnapshot
				if err := json.Unmarshal(snap, &sn); err != nil || len(sn.Pending) != 5 {
					t.Fatalf("snapshot %s: %v, want 5 pending", snap, err)
				}
				sn.Pending = nil
				snap, _ = json.Marshal(sn)
			}
			restore.Snapshot = snap
			checks := s.Checks()
			run2 := txnSink(t, s, restore)
			defer run2.Close()
			var w []string
			for i := range 5 {
				w = append(w, fmt.Sprintf(`{"n":%d}`, i))
			}
			if how == "restore" {
				if got := bodies(s); got != strings.Join(w, " ") {
					t.Errorf("visible after the restore:\n%s\nwant the interval the checkpoint covered:\n%s", got, strings.Join(w, " "))
				}
			}
			deadline := time.Now().Add(10 * time.Second)
			for s.HalfMessages("out") > 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if got := bodies(s); got != strings.Join(w, " ") {
				t.Errorf("visible after the checks:\n%s\nwant the interval the checkpoint covered:\n%s", got, strings.Join(w, " "))
			}
			if n := s.Checks() - checks; how == "checks" && n < 8 || how == "restore" && n < 3 {
				t.Errorf("%d checks answered by the new run", n)
			}

			// The new run goes on: what it commits adds to it, and its
			// intervals waiting for a checkpoint are left alone by checks.
			write(t, run2, 100, 102)
			if err := run2.Prepare(ctx); err != nil {
				t.Fatal(err)
			}
			time.Sleep(300 * time.Millisecond) // several checks: answered UNKNOWN
			if n := s.HalfMessages("out"); n != 2 {
				t.Errorf("%d half messages while their checkpoint is pending, want 2", n)
			}
			if err := run2.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if got := len(s.Messages("out")); got != 7 {
				t.Errorf("%d messages, want 7", got)
			}
		})
	}
}

// TestTxnCheckAnswers covers the checker's answers one by one.
func TestTxnCheckAnswers(t *testing.T) {
	ts := &TxnSink{owner: "o", run: "r3", committed: 4, lineage: []runSeq{{"r1", 7}, {"r2", 2}}}
	cases := []struct {
		prop string
		want string
	}{
		{"o:r3:4", "COMMIT"}, {"o:r3:5", "UNKNOWN"}, {"o:r1:7", "COMMIT"}, {"o:r1:8", "ROLLBACK"},
		{"o:r2:1", "COMMIT"}, {"o:r2:3", "ROLLBACK"}, {"o:r9:1", "ROLLBACK"}, {"other:r1:1", "UNKNOWN"}, {"garbage", "UNKNOWN"},
	}
	names := map[int32]string{0: "UNKNOWN", 1: "COMMIT", 2: "ROLLBACK"}
	for _, c := range cases {
		owner, run, seq, ok := parseTxn(c.prop)
		got := "UNKNOWN"
		if ok {
			got = names[int32(ts.resolve(owner, run, seq))]
		}
		if got != c.want {
			t.Errorf("%s: %s, want %s", c.prop, got, c.want)
		}
	}
}
