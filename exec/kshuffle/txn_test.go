package kshuffle

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestTransactionalHold checks when a Transactional writer hands its
// records to the client: rows buffered before a barrier at the barrier;
// those after it only once that checkpoint completed, or at the next
// barrier, whose checkpoint cannot start before the last one completed,
// even if the writer has not heard of it yet.
func TestTransactionalHold(t *testing.T) {
	brokers := newCluster(t)
	ctx := testContext(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	w := openWriter(t, ctx, Options{Topic: "hold", Partitions: 1, Schema: testSchema, WriterID: 0, Writers: 1,
		Client: cl, Transactional: true, Linger: time.Hour, WatermarkInterval: time.Hour})
	written := func() int64 {
		t.Helper()
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		return w.Stats().DataRecords - int64(len(w.held))
	}
	must(t, w.Process(batchOf(testRow(0, 0, 10))))
	must(t, w.Barrier(1))
	if n := written(); n != 1 {
		t.Fatalf("after barrier 1: %d records sent, want 1", n)
	}
	must(t, w.Process(batchOf(testRow(0, 1, 10))))
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if len(w.held) != 1 {
		t.Fatalf("the row after barrier 1 is not held until checkpoint 1 completes: %d held", len(w.held))
	}
	// Barrier 2 before the notice of checkpoint 1: the held row goes now.
	must(t, w.Process(batchOf(testRow(0, 2, 10))))
	must(t, w.Barrier(2))
	if n := written(); n != 3 || len(w.held) != 0 {
		t.Fatalf("after barrier 2: %d records sent, %d held; want 3 sent, none held", n, len(w.held))
	}
	must(t, w.Process(batchOf(testRow(0, 3, 10))))
	must(t, w.Flush())
	must(t, w.CheckpointComplete(1)) // late: it releases nothing of epoch 2
	if len(w.held) != 1 {
		t.Fatalf("a late notice of checkpoint 1 released records of checkpoint 3: %d held", len(w.held))
	}
	must(t, w.CheckpointComplete(2))
	if n := written(); n != 4 || len(w.held) != 0 {
		t.Fatalf("after checkpoint 2 completed: %d records sent, %d held; want 4 sent, none held", n, len(w.held))
	}
}
