package kafkalog

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicesql/sluice/internal/kafkatest"
)

// A checkpoint commits state, positions and the sinks' records together; a
// successor that takes over the transactional ID after a crash sees exactly
// the committed checkpoint, and the crashed transaction's records are never
// visible.
func TestCommitAndTakeOver(t *testing.T) {
	bs := kafkatest.Start(t, 1, "out")
	ctx := context.Background()
	opts := Options{Bootstrap: []string{bs}, Topic: "job-state", TransactionalID: "job-1"}

	a, err := Open(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := a.Store("job/agg/0")
	s.Put([]byte("k"), []byte("1"))
	s.Put([]byte("gone"), []byte("x"))
	s.Offsets().Admit(0, 10)
	s.Checkpoint()
	a.Txn().Produce(ctx, &kgo.Record{Topic: "out", Value: []byte("committed")}, nil)
	if err := a.Commit("", map[string]int64{"job/source-1/0": 10}); err != nil {
		t.Fatal(err)
	}
	// The next epoch: a change, a delete and an output record, never
	// committed: the process "crashes" (a is abandoned, not closed).
	s.Put([]byte("k"), []byte("2"))
	s.Delete([]byte("gone"))
	a.Txn().Produce(ctx, &kgo.Record{Topic: "out", Value: []byte("uncommitted")}, nil)
	if err := a.Txn().Flush(ctx); err != nil {
		t.Fatal(err)
	}

	b, err := Open(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	pos, _ := b.Positions("")
	if pos["job/source-1/0"] != 10 {
		t.Errorf("positions = %v", pos)
	}
	s2, _ := b.Store("job/agg/0")
	if v, ok, _ := s2.Get([]byte("k")); !ok || string(v) != "1" {
		t.Errorf("k = %q %v, want the committed 1", v, ok)
	}
	if _, ok, _ := s2.Get([]byte("gone")); !ok {
		t.Error("the uncommitted delete was applied")
	}
	if off, _ := s2.Offsets().Get(0); off != 10 {
		t.Errorf("offsets = %d", off)
	}
	recs := kafkatest.ReadAll(t, bs, "out")
	if len(recs) != 1 || string(recs[0].Value) != "committed" {
		var vals []string
		for _, r := range recs {
			vals = append(vals, string(r.Value))
		}
		t.Errorf("visible output %q, want only the committed record", vals)
	}
	// The successor commits on top: a third instance sees its changes.
	s2.Delete([]byte("gone"))
	if err := b.Commit("", map[string]int64{"job/source-1/0": 20}); err != nil {
		t.Fatal(err)
	}
	c, err := Open(ctx, Options{Bootstrap: []string{bs}, Topic: "job-state", TransactionalID: "job-1"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s3, _ := c.Store("job/agg/0")
	if _, ok, _ := s3.Get([]byte("gone")); ok {
		t.Error("a committed delete was lost")
	}
	if pos, _ := c.Positions(""); pos["job/source-1/0"] != 20 {
		t.Errorf("positions = %v", pos)
	}
}

// A backend whose brokers are down says so at once in the job's log,
// naming the address, and keeps trying until its Timeout; then its error
// names the address too.
func TestOpenBrokerDown(t *testing.T) {
	addr := kafkatest.ClosedAddr(t)
	var mu sync.Mutex
	var lines []string
	logf := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, fmt.Sprintf(format, args...))
	}
	_, err := Open(context.Background(), Options{Bootstrap: []string{addr}, Topic: "job-state", TransactionalID: "job-1",
		Timeout: time.Second, Logf: logf})
	if err == nil || !strings.Contains(err.Error(), "cannot connect to Kafka at "+addr) {
		t.Fatalf("got error %v, want one naming %s", err, addr)
	}
	mu.Lock()
	defer mu.Unlock()
	want := "kafka state backend (topic job-state): cannot connect to Kafka broker " + addr + " ("
	if got := strings.Join(lines, "\n"); !strings.Contains(got, want) || !strings.Contains(got, "still trying") {
		t.Errorf("the job's log does not say at once what is wrong (want %q):\n%s", want, got)
	}
}

// The members of a cluster commit the positions of their own partitions
// into one changelog: a commit merges its positions into the others' and
// forgets only what it is told to.
func TestPositionsOfSeveralWriters(t *testing.T) {
	bs := kafkatest.Start(t, 1)
	ctx := context.Background()
	open := func(id string) *Backend {
		t.Helper()
		b, err := Open(ctx, Options{Bootstrap: []string{bs}, Topic: "group-state", TransactionalID: id})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a := open("m0")
	if err := a.Commit("job", map[string]int64{"job/src/0": 5}); err != nil {
		t.Fatal(err)
	}
	b := open("m1") // restores a's position
	if err := b.Commit("job", map[string]int64{"job/src/1": 7}); err != nil {
		t.Fatal(err)
	}
	a.Close()
	b.Close()
	c := open("m2")
	if pos, _ := c.Positions("job"); len(pos) != 2 || pos["job/src/0"] != 5 || pos["job/src/1"] != 7 {
		t.Fatalf("positions %v", pos)
	}
	if err := c.ForgetPositions([]string{"job/src/0"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Commit("job", nil); err != nil {
		t.Fatal(err)
	}
	c.Close()
	d := open("m3")
	defer d.Close()
	if pos, _ := d.Positions("job"); len(pos) != 1 || pos["job/src/1"] != 7 {
		t.Fatalf("positions after forgetting one %v", pos)
	}
}
