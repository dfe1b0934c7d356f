package rank

import (
	"time"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/state"
	"github.com/sluicesql/sluice/types"
)

// ttl expires the partitions of a Top-N not written for Config.TTL.
type ttl struct {
	limit   int64 // µs; 0: no TTL
	now     func() int64
	queue   []expiry // partitions in the order they were written
	head    int
	expired []string // keys forgotten since the last checkpoint
}

type expiry struct {
	p   *partition
	key string
	at  int64
}

// open starts the TTL of o: every restored partition counts as written
// now.
func (t *ttl) open(o *Operator, ctx *exec.Context) {
	t.limit = o.cfg.TTL.Microseconds()
	if t.limit <= 0 {
		return
	}
	t.now = func() int64 { return time.Now().UnixMicro() }
	if ctx != nil && ctx.Now != nil {
		t.now = ctx.Now
	}
	now := t.now()
	for key, p := range o.parts {
		p.written = now
		t.queue = append(t.queue, expiry{p: p, key: key, at: now})
	}
}

// written notes that the partition of vals was written now.
func (t *ttl) written(o *Operator, vals []types.Value) {
	if t.limit <= 0 {
		return
	}
	p := o.partition(vals, false)
	if p == nil {
		return
	}
	now := t.now()
	if p.written == now {
		return
	}
	p.written = now
	t.queue = append(t.queue, expiry{p: p, key: string(o.keyBuf), at: now})
}

// expire forgets the partitions not written since now - TTL.
func (t *ttl) expire(o *Operator) {
	if t.limit <= 0 {
		return
	}
	limit := t.now() - t.limit
	for t.head < len(t.queue) && t.queue[t.head].at < limit {
		x := t.queue[t.head]
		t.queue[t.head] = expiry{}
		t.head++
		if x.p.written != x.at || o.parts[x.key] != x.p {
			continue // written since, or gone
		}
		delete(o.parts, x.key)
		o.size.removePart(x.key, x.p)
		if o.store != nil {
			t.expired = append(t.expired, x.key)
		}
		if o.metrics != nil {
			o.metrics.ExpiredKeys.Add(1)
		}
	}
	if t.head > 1024 && t.head > len(t.queue)/2 {
		t.queue = append(t.queue[:0], t.queue[t.head:]...)
		t.head = 0
	}
}

// forget deletes the expired partitions from the store, before the
// checkpoint writes the changed ones (a partition started over since is
// written again).
func (t *ttl) forget(st state.Store) error {
	for _, key := range t.expired {
		if err := st.Delete([]byte(key)); err != nil {
			return err
		}
	}
	t.expired = t.expired[:0]
	return nil
}

// TickEvery implements exec.Timed: with a TTL, partitions expire as
// processing time passes.
func (o *Operator) TickEvery() time.Duration {
	if o.cfg.TTL <= 0 {
		return 0
	}
	return min(max(o.cfg.TTL/10, 10*time.Millisecond), time.Second)
}

// Tick implements exec.Timed.
func (o *Operator) Tick() error {
	o.ttl.expire(o)
	o.size.report(len(o.parts))
	return nil
}
