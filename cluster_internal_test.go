package sluice

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicesql/sluice/internal/kafkatest"
)

// TestClusterFencing commits a checkpoint's offsets as a member of the
// current generation (accepted, visible to the group once the transaction
// commits) and as a member of an older one (refused: a zombie's checkpoint
// must not commit).
func TestClusterFencing(t *testing.T) {
	bs := kafkatest.Start(t, 2, "in")
	member := kafkatest.Client(t, bs, kgo.ConsumerGroup("g"), kgo.ConsumeTopics("in"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		if _, gen := member.GroupMetadata(); gen > 0 {
			break
		}
		pctx, pcancel := context.WithTimeout(ctx, 100*time.Millisecond)
		member.PollRecords(pctx, 1) // joins the group
		pcancel()
		if ctx.Err() != nil {
			t.Fatal("the member did not join")
		}
	}
	cj := &clusterJob{group: "g", txnID: "g-test", member: member, groupMeta: member.GroupMetadata,
		topicIDs: map[string][16]byte{}}
	keys := map[string]topicPartition{"src/0": {"in", 0}, "src/1": {"in", 1}}
	txn := kafkatest.Client(t, bs, kgo.TransactionalID("g-test"), kgo.DefaultProduceTopic("in"))

	commit := func(pos map[string]int64) error {
		t.Helper()
		if err := txn.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := txn.ProduceSync(ctx, &kgo.Record{Value: []byte("x")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		err := cj.commitOffsets(ctx, txn, keys, nil, pos)
		end := kgo.TryCommit
		if err != nil {
			end = kgo.TryAbort
		}
		if eerr := txn.EndTransaction(ctx, end); eerr != nil {
			t.Fatal(eerr)
		}
		return err
	}
	if err := commit(map[string]int64{"src/0": 41, "src/1": 6, "other/0": 3}); err != nil {
		t.Fatal(err)
	}
	offs, err := kadm.NewClient(member).FetchOffsets(ctx, "g")
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[int32]int64{0: 42, 1: 7} {
		if o, ok := offs.Lookup("in", p); !ok || o.At != want {
			t.Errorf("partition %d: committed %v, want %d", p, o.At, want)
		}
	}

	id, gen := member.GroupMetadata()
	cj.groupMeta = func() (string, int32) { return id, gen - 1 }
	if err := commit(map[string]int64{"src/0": 99}); !errors.Is(err, errFenced) {
		t.Fatalf("a stale member's commit: %v, want it refused", err)
	}
	offs, err = kadm.NewClient(member).FetchOffsets(ctx, "g")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := offs.Lookup("in", 0); o.At != 42 {
		t.Fatalf("the refused commit moved the offset to %d", o.At)
	}
}
