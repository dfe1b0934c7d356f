package rocketmq

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	rmq "github.com/apache/rocketmq-clients/golang/v5"
	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/internal/rmqwire"
	"github.com/sluicesql/sluice/types"
)

// txnProperty is the user property that ties a transactional message to
// the sink and the commit that it belongs to: "owner:run:seq".
const txnProperty = "SLUICE_TXN"

// keptRuns is how many earlier runs of a job a snapshot remembers, to
// answer the checks of their half messages.
const keptRuns = 32

// keptPending is how many half messages a snapshot lists for a restored
// run to commit; past it, the rest waits for the proxy's checks.
const keptPending = 1 << 16

// commitEvery is how often a job without checkpoints commits.
const commitEvery = time.Second

// TxnSink sends rows as transactional messages tied to the job's
// checkpoints ('sink.delivery-guarantee' = 'exactly-once'). A row is sent
// as a half message when it is written (invisible to consumers); Prepare,
// at a checkpoint's barrier, waits until every half message written
// since the last one is stored; Commit, once the checkpoint has
// completed, commits them (EndTransaction), and they become visible.
// Close rolls back what no barrier covered.
//
// Each half message carries the property SLUICE_TXN = owner:run:seq: the
// sink (its job and table, hashed), the run of the job (a random ID
// drawn at restore) and the number of the barrier interval it was
// written in (1, 2, ... in each run). The snapshot kept with each
// checkpoint lists the runs of the job whose checkpoints completed with,
// for each, the last interval a completed checkpoint covered; and the
// message and transaction IDs of the half messages the checkpoint covers
// that were not committed yet.
//
// A run that dies between a checkpoint and its commit leaves those half
// messages unresolved. The next run, restored from that checkpoint,
// commits the listed ones at once; and whatever stays unresolved (a
// commit that did not reach the proxy: the client reports no error of
// it; the half messages of intervals no checkpoint covered) is settled by
// the proxy's checks: the proxy asks a producer of the topic about each,
// and the sink's checker (checker.go) answers from the list of runs: COMMIT for an interval a
// completed checkpoint covered, ROLLBACK for a later one of an earlier
// run, which no completed checkpoint covered and never will; UNKNOWN for
// its own run's intervals still waiting for their checkpoint, and for
// another sink's messages (the proxy asks again, maybe another
// producer). So a restarted job commits what its restored checkpoint
// holds and drops the rest, which it writes again from its replayed
// input: nothing lost or doubled.
type TxnSink struct {
	*Sink

	owner        string
	run          string
	checkpointed bool
	txns         []*txn // sent or being sent and not committed, in order

	chk *checker // answers the proxy's checks

	tmu       sync.Mutex // guards what the checker reads
	lineage   []runSeq   // earlier runs, oldest first
	seq       int64      // the interval rows written now belong to
	prepared  int64      // the interval of the last barrier
	committed int64      // the last interval committed
}

// txn is a half message of the sink.
type txn struct {
	seq   int64
	tx    rmq.Transaction
	ok    bool // sent (set before the send's wg.Done)
	msgID string
	txID  string
}

// runSeq is a run and the last interval its completed checkpoints cover.
type runSeq struct {
	Run string `json:"run"`
	Seq int64  `json:"seq"`
}

// txnSnapshot is what a TxnSink keeps with a checkpoint.
type txnSnapshot struct {
	Owner string   `json:"owner"`
	Runs  []runSeq `json:"runs"`
	// Pending are the half messages the checkpoint covers and that were
	// not yet committed when it was taken: message and transaction IDs.
	Pending [][2]string `json:"pending,omitempty"`
}

// Restore implements connector.StatefulSink: it takes the runs of the
// job from the snapshot and starts the producer, which from then on
// answers the proxy's checks.
func (t *TxnSink) Restore(ctx context.Context, r connector.SinkRestore) error {
	h := sha256.Sum256([]byte(t.env.Job + "\x00" + r.Owner + "\x00" + t.table.Name))
	t.owner = hex.EncodeToString(h[:8])
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	t.run = hex.EncodeToString(b[:])
	t.checkpointed = r.Checkpointed
	var pending [][2]string
	if r.Snapshot != nil {
		var snap txnSnapshot
		if err := json.Unmarshal(r.Snapshot, &snap); err != nil {
			return fmt.Errorf("rocketmq table '%s': its saved transaction state is damaged: %w", t.table.Name, err)
		}
		if snap.Owner != t.owner {
			return fmt.Errorf("rocketmq table '%s': its saved transaction state belongs to another sink (%s, not %s)", t.table.Name, snap.Owner, t.owner)
		}
		t.lineage = snap.Runs
		pending = snap.Pending
	}
	t.seq = 1
	if err := t.start(ctx); err != nil {
		return err
	}
	chk, err := startChecker(t.cfg, "sluice-txn-"+t.run, t.check, t.env.Log)
	if err != nil {
		return fmt.Errorf("rocketmq table '%s': %w", t.table.Name, err)
	}
	t.chk = chk
	if len(pending) > 0 {
		t.commitPending(ctx, pending)
	}
	if len(t.lineage) > 0 {
		t.env.Log("rocketmq table '%s': run %s answers the checks of the half messages of %d earlier runs", t.table.Name, t.run, len(t.lineage))
	}
	return nil
}

// Snapshot implements connector.StatefulSink: the runs, this one with the
// interval just prepared, which its checkpoint covers if it completes.
func (t *TxnSink) Snapshot() ([]byte, error) {
	t.tmu.Lock()
	runs := append([]runSeq(nil), t.lineage...)
	if t.prepared > 0 {
		runs = append(runs, runSeq{Run: t.run, Seq: t.prepared})
	}
	t.tmu.Unlock()
	if len(runs) > keptRuns {
		runs = runs[len(runs)-keptRuns:]
	}
	snap := txnSnapshot{Owner: t.owner, Runs: runs}
	for _, x := range t.txns {
		if x.seq <= t.prepared && x.ok && len(snap.Pending) < keptPending {
			snap.Pending = append(snap.Pending, [2]string{x.msgID, x.txID})
		}
	}
	return json.Marshal(snap)
}

// commitPending commits, at restore, the half messages the restored
// checkpoint covers and its run may not have committed (it died between
// the checkpoint and its commit). What has been ended since is refused
// by the proxy, which is fine; a commit that fails is left to the
// proxy's checks, which the checker answers COMMIT. A proxy that keeps
// transactions in its memory may not know them after its own restart:
// the checks then resolve them too.
func (t *TxnSink) commitPending(ctx context.Context, pending [][2]string) {
	c := t.cfg
	cc, err := rmqwire.Dial(firstEndpoint(c.endpoints))
	if err != nil {
		t.env.Log("rocketmq table '%s': cannot commit the %d half messages of the restored checkpoint now (%v): the proxy's checks will", c.table, len(pending), err)
		return
	}
	defer cc.Close()
	cl := v2.NewMessagingServiceClient(cc)
	id := c.identityFor("sluice-recover-" + t.run)
	topic := &v2.Resource{ResourceNamespace: c.namespace, Name: c.topic}
	var mu sync.Mutex
	var committed, failed int
	var firstErr error
	xs := make([]*txn, len(pending))
	for i, p := range pending {
		xs[i] = &txn{ok: true, msgID: p[0], txID: p[1]}
	}
	endAll(xs, c.maxInflight, func(x *txn) {
		rctx, cancel := context.WithTimeout(id.Sign(ctx), c.reqTimeout)
		resp, err := cl.EndTransaction(rctx, &v2.EndTransactionRequest{Topic: topic, MessageId: x.msgID, TransactionId: x.txID,
			Resolution: v2.TransactionResolution_COMMIT, Source: v2.TransactionSource_SOURCE_CLIENT})
		cancel()
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil && resp.GetStatus().GetCode() == v2.Code_OK:
			committed++
		case err == nil && resp.GetStatus().GetCode() == v2.Code_INVALID_TRANSACTION_ID:
			// Ended already.
		default:
			failed++
			if firstErr == nil {
				firstErr = err
				if err == nil {
					firstErr = &statusError{code: int32(resp.GetStatus().GetCode()), msg: resp.GetStatus().GetMessage()}
				}
			}
		}
	})
	if committed > 0 || failed > 0 {
		t.env.Log("rocketmq table '%s': committed %d half messages of the restored checkpoint that its run had not; %d failed (%v) and are left to the proxy's checks",
			c.table, committed, failed, firstErr)
	}
}

// check answers the proxy's check of a half message.
func (t *TxnSink) check(m *v2.Message) rmq.TransactionResolution {
	owner, run, seq, ok := parseTxn(m.GetUserProperties()[txnProperty])
	if !ok {
		return rmq.UNKNOWN
	}
	return t.resolve(owner, run, seq)
}

// resolve answers for a half message of owner's run, in interval seq.
func (t *TxnSink) resolve(owner, run string, seq int64) rmq.TransactionResolution {
	if owner != t.owner {
		return rmq.UNKNOWN
	}
	t.tmu.Lock()
	defer t.tmu.Unlock()
	if run == t.run {
		if seq <= t.committed {
			return rmq.COMMIT
		}
		return rmq.UNKNOWN
	}
	for _, r := range t.lineage {
		if r.Run == run {
			if seq <= r.Seq {
				return rmq.COMMIT
			}
			return rmq.ROLLBACK
		}
	}
	// A run none of whose checkpoints completed, or one too old to be
	// remembered.
	return rmq.ROLLBACK
}

func parseTxn(v string) (owner, run string, seq int64, ok bool) {
	p := strings.Split(v, ":")
	if len(p) != 3 {
		return "", "", 0, false
	}
	n, err := strconv.ParseInt(p[2], 10, 64)
	return p[0], p[1], n, err == nil
}

// Write implements connector.Sink: each row goes out as a half message.
func (t *TxnSink) Write(ctx context.Context, b *types.Batch) error {
	if err := t.err(); err != nil {
		return err
	}
	if t.run == "" { // written without a restore: as a job without state
		if err := t.Restore(ctx, connector.SinkRestore{}); err != nil {
			return err
		}
	}
	prop := t.owner + ":" + t.run + ":" + strconv.FormatInt(t.seq, 10)
	for i := range b.Rows {
		m, err := t.message(b.Rows[i])
		if err != nil {
			return err
		}
		m.AddProperty(txnProperty, prop)
		select {
		case t.sem <- struct{}{}:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		x := &txn{seq: t.seq, tx: t.prod.BeginTransaction()}
		t.txns = append(t.txns, x)
		t.wg.Add(1)
		go func() {
			defer func() { <-t.sem; t.wg.Done() }()
			rs, err := t.prod.SendWithTransaction(context.WithoutCancel(ctx), m, x.tx)
			if err != nil {
				t.fail(t.sendError(err))
				return
			}
			if len(rs) > 0 {
				x.msgID, x.txID = rs[0].MessageID, rs[0].TransactionId
			}
			x.ok = true
		}()
	}
	return t.err()
}

// Prepare implements connector.Committer: every half message written is
// stored; the rows written from now on belong to the next interval.
func (t *TxnSink) Prepare(ctx context.Context) error {
	t.wg.Wait()
	if err := t.err(); err != nil {
		return err
	}
	t.tmu.Lock()
	t.prepared = t.seq
	t.seq++
	t.tmu.Unlock()
	return nil
}

// Flush implements connector.Sink: every half message written is
// stored (none is committed: that is Commit's, after a checkpoint).
func (t *TxnSink) Flush(ctx context.Context) error {
	t.wg.Wait()
	return t.err()
}

// Commit implements connector.Committer: the half messages of the
// intervals prepared are committed.
func (t *TxnSink) Commit(ctx context.Context) error {
	t.tmu.Lock()
	upTo := t.prepared
	t.committed = upTo // from now on, checks of them are answered COMMIT
	t.tmu.Unlock()
	k := 0
	for k < len(t.txns) && t.txns[k].seq <= upTo {
		k++
	}
	endAll(t.txns[:k], t.cfg.maxInflight, func(x *txn) {
		// The client logs, and does not return, a failure to end the
		// transaction: the proxy's check then commits it.
		x.tx.Commit()
	})
	t.txns = append(t.txns[:0], t.txns[k:]...)
	return nil
}

// endAll calls end for each sent transaction, n at a time.
func endAll(xs []*txn, n int, end func(*txn)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, n)
	for _, x := range xs {
		if !x.ok {
			continue
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			end(x)
		}()
	}
	wg.Wait()
}

// CommitEvery implements connector.SelfCommitting: a job without
// checkpoints commits every second.
func (t *TxnSink) CommitEvery() time.Duration { return commitEvery }

// Close implements connector.Sink: the half messages written since the
// last barrier are rolled back; those of a barrier whose commit did not
// come are left to the proxy's check (the checkpoint may have completed).
func (t *TxnSink) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	t.mu.Unlock()
	t.wg.Wait()
	t.tmu.Lock()
	prepared := t.prepared
	t.tmu.Unlock()
	var drop []*txn
	for _, x := range t.txns {
		if x.seq > prepared {
			drop = append(drop, x)
		}
	}
	endAll(drop, t.cfg.maxInflight, func(x *txn) { x.tx.RollBack() })
	t.txns = nil
	if t.chk != nil {
		t.chk.close()
	}
	if t.prod != nil {
		if err := t.prod.GracefulStop(); err != nil {
			return fmt.Errorf("rocketmq table '%s': closing the producer: %w", t.table.Name, err)
		}
	}
	return nil
}
