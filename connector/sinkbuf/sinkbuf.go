// Package sinkbuf buffers the changes a sink writes to a database or a
// key-value store and hands them to the store in batches, as Flink's JDBC
// sink does: within a buffer the last change of each key wins (a keyed
// buffer reduces its rows by key; an append buffer keeps them all, in
// order), and the buffer is written when it holds Options.MaxRows changes,
// every Options.Interval (from a goroutine of its own), and whenever the
// sink is asked to flush (at a checkpoint and at the end of input).
//
// A write that fails is tried again, the whole batch, after waits of
// Backoff, 2×Backoff, ... up to Options.MaxRetries times, unless its error
// is Permanent; a store's writes must therefore be idempotent (upserts and
// deletes by key, or a transaction that commits all or nothing).
//
// Invariants: a batch holds each key of a keyed buffer once; writes never
// overlap (the write function runs under the buffer's lock, from the
// caller's goroutine or the interval's); Flush returns only once every
// change added before it is written, or with the error that stopped it.
// An error that retries did not cure sticks: every later call returns it,
// so that the job fails and restarts from its last checkpoint rather than
// skip what was not written.
//
// A held buffer (Hold; keyed only) writes at commits only, for a sink
// whose output must follow the job's checkpoints exactly: Seal, at a
// checkpoint barrier, sets aside what was added so far (merged, by key,
// with what earlier seals left uncommitted); Sealed lists it for the
// checkpoint's snapshot; Commit, once the checkpoint is complete, writes
// it. The store then only ever holds the output of completed checkpoints,
// and a restarted job writes its snapshot's sealed changes again (an
// idempotent write) before anything else.
package sinkbuf

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sluicesql/sluice/types"
	"github.com/sluicesql/sluice/types/rowcodec"
)

// Change is one buffered change: the row's values (a copy the buffer
// owns) and whether it deletes its key rather than upserts (or inserts)
// the row.
type Change struct {
	Vals   []types.Value
	Delete bool
}

// WriteFunc writes a batch of changes to the store. It may be called again
// with the same batch after an error, so it must leave the store as one
// successful call would, however many calls failed before it.
type WriteFunc func(ctx context.Context, batch []Change) error

// Options say when a buffer is written and how failures are retried.
type Options struct {
	// MaxRows is the number of changes (counted as they are added, before
	// they are reduced by key) at which the buffer is written; 0: no
	// limit ('sink.buffer-flush.max-rows').
	MaxRows int
	// Interval, if not zero, writes what the buffer holds that often
	// ('sink.buffer-flush.interval').
	Interval time.Duration
	// MaxRetries is how many times a failed write is tried again
	// ('sink.max-retries').
	MaxRetries int
	// Backoff is the wait before the first retry; retry n waits n times
	// as long.
	Backoff time.Duration
	// What names the sink in errors and log lines ("jdbc table 'orders'").
	What string
	// Log, if set, writes a line to the job's log (a retry and its cause).
	Log func(format string, args ...any)
}

// Buffer is the buffer of one sink. Its methods are safe for concurrent
// use.
type Buffer struct {
	opts  Options
	keyed bool
	write WriteFunc

	mu      sync.Mutex
	changes []Change
	index   map[string]int // keyed: the position of each key's change
	held    bool           // Hold: written by Commit only
	sealed  []Change       // held: sealed, not yet committed
	sealIdx map[string]int // the position of each key's sealed change
	added   int            // changes added since the last write
	err     error          // the error that stopped the buffer
	closed  bool

	tickOnce  sync.Once
	closeOnce sync.Once
	stop      chan struct{} // closed by Close: the interval's goroutine ends
	ticking   chan struct{} // closed when it has ended
	bgCtx     context.Context
	bgCancel  context.CancelFunc

	writes, retries int64 // under mu
}

// New returns a buffer that writes with write: a keyed one (each key's
// last change wins) or an append one (every change, in order).
func New(keyed bool, opts Options, write WriteFunc) *Buffer {
	b := &Buffer{opts: opts, keyed: keyed, write: write, stop: make(chan struct{}), ticking: make(chan struct{})}
	if keyed {
		b.index = make(map[string]int)
	}
	b.bgCtx, b.bgCancel = context.WithCancel(context.Background())
	return b
}

// permanent marks an error that no retry can cure.
type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

// Permanent marks err as one that trying again cannot cure (a missing
// table, a value the store refuses): the buffer does not retry it.
func Permanent(err error) error {
	if err == nil || IsPermanent(err) {
		return err
	}
	return permanent{err}
}

// IsPermanent reports whether err, or an error it wraps, was marked
// Permanent.
func IsPermanent(err error) bool {
	var p permanent
	return errors.As(err, &p)
}

// ErrClosed is returned by a buffer's methods after Close.
var ErrClosed = errors.New("sink is closed")

// Add buffers a change: the row vals (copied) and whether it deletes. key
// is the change's key in a keyed buffer (the buffer copies it), ignored in
// an append one. Once the buffer holds MaxRows changes, Add writes them
// before it returns.
func (b *Buffer) Add(ctx context.Context, key []byte, vals []types.Value, del bool) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return b.err
	}
	if b.closed {
		return ErrClosed
	}
	c := Change{Vals: append([]types.Value(nil), vals...), Delete: del}
	if b.keyed {
		if i, ok := b.index[string(key)]; ok {
			b.changes[i] = c
		} else {
			b.index[string(key)] = len(b.changes)
			b.changes = append(b.changes, c)
		}
	} else {
		b.changes = append(b.changes, c)
	}
	b.added++
	if b.held {
		return nil
	}
	if b.opts.Interval > 0 {
		b.tickOnce.Do(func() { go b.tick() })
	}
	if b.opts.MaxRows > 0 && b.added >= b.opts.MaxRows {
		return b.flushLocked(ctx)
	}
	return nil
}

// Hold makes a keyed buffer write at commits only (see the package
// comment). Call it before the first Add.
func (b *Buffer) Hold() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.keyed {
		panic("sinkbuf: Hold of an append buffer")
	}
	b.held = true
	if b.sealIdx == nil {
		b.sealIdx = make(map[string]int)
	}
}

// Held reports whether the buffer writes at commits only.
func (b *Buffer) Held() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.held
}

// Seal sets aside the changes added so far for the next Commit, merged
// with those sealed before and not yet committed (a key's later change
// wins).
func (b *Buffer) Seal() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return b.err
	}
	for key, i := range b.index {
		if j, ok := b.sealIdx[key]; ok {
			b.sealed[j] = b.changes[i]
		} else {
			b.sealIdx[key] = len(b.sealed)
			b.sealed = append(b.sealed, b.changes[i])
		}
	}
	clear(b.changes)
	b.changes = b.changes[:0]
	clear(b.index)
	b.added = 0
	return nil
}

// Sealed calls f with each sealed change not yet committed, under the
// buffer's lock: f must not call the buffer.
func (b *Buffer) Sealed(f func(Change) error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range b.sealed {
		if err := f(c); err != nil {
			return err
		}
	}
	return nil
}

// Commit writes the sealed changes, trying again after transient
// errors.
func (b *Buffer) Commit(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return b.err
	}
	if len(b.sealed) == 0 {
		return nil
	}
	if err := b.writeRetrying(ctx, b.sealed); err != nil {
		b.err = err
		return err
	}
	b.writes++
	clear(b.sealed)
	b.sealed = b.sealed[:0]
	clear(b.sealIdx)
	return nil
}

// tick writes the buffer every Interval until Close.
func (b *Buffer) tick() {
	defer close(b.ticking)
	t := time.NewTicker(b.opts.Interval)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
		}
		b.mu.Lock()
		if b.err == nil && !b.closed {
			// An error sticks: the next call from the sink returns it.
			_ = b.flushLocked(b.bgCtx)
		}
		b.mu.Unlock()
	}
}

// Flush writes every change buffered so far (a held buffer: none; its
// changes are written by Commit).
func (b *Buffer) Flush(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed && b.err == nil {
		return ErrClosed
	}
	if b.held {
		return b.err
	}
	return b.flushLocked(ctx)
}

// Pending returns the number of changes buffered (after reduction).
func (b *Buffer) Pending() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.changes)
}

// Stats returns how many batches were written and how many writes were
// tried again.
func (b *Buffer) Stats() (writes, retries int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.writes, b.retries
}

func (b *Buffer) flushLocked(ctx context.Context) error {
	if b.err != nil {
		return b.err
	}
	if len(b.changes) == 0 {
		return nil
	}
	if err := b.writeRetrying(ctx, b.changes); err != nil {
		b.err = err
		return err
	}
	b.writes++
	clear(b.changes) // let the values go
	b.changes = b.changes[:0]
	if b.keyed {
		clear(b.index)
	}
	b.added = 0
	return nil
}

// writeRetrying writes batch, trying again after transient errors.
func (b *Buffer) writeRetrying(ctx context.Context, batch []Change) error {
	for attempt := 0; ; attempt++ {
		err := b.write(ctx, batch)
		if err == nil {
			return nil
		}
		if IsPermanent(err) || ctx.Err() != nil {
			return err
		}
		if attempt >= b.opts.MaxRetries {
			if attempt == 0 {
				return err
			}
			return fmt.Errorf("%w (after %d retries)", err, attempt)
		}
		wait := b.opts.Backoff * time.Duration(attempt+1)
		if b.opts.Log != nil {
			b.opts.Log("%s: cannot write %d changes: %v; retry %d of %d in %v", b.opts.What, len(batch), err, attempt+1, b.opts.MaxRetries, wait)
		}
		b.retries++
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return fmt.Errorf("%w (gave up waiting to retry: %v)", err, ctx.Err())
		case <-timer.C:
		}
	}
}

// Close writes what the buffer holds and stops it; a held buffer drops
// what was not committed instead (the job's next run restores it from its
// last checkpoint). It returns the error that stopped the buffer, if any;
// later calls return nil.
func (b *Buffer) Close(ctx context.Context) error {
	first := false
	b.closeOnce.Do(func() { first = true })
	if !first {
		return nil
	}
	// The interval's goroutine may be writing: let it end first (if it
	// never started, nothing is to wait for).
	close(b.stop)
	b.tickOnce.Do(func() { close(b.ticking) })
	<-b.ticking
	b.bgCancel()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	if b.held {
		clear(b.changes)
		clear(b.sealed)
		return b.err
	}
	return b.flushLocked(ctx)
}

// Snapshot encodes the sealed changes, rows of the given column types
// (+I an upsert, -D a delete), for a checkpoint; Restore reads it back.
func (b *Buffer) Snapshot(cols []types.Type) ([]byte, error) {
	codec, err := rowcodec.New(cols)
	if err != nil {
		return nil, err
	}
	enc := codec.NewEncoder()
	err = b.Sealed(func(c Change) error {
		kind := types.Insert
		if c.Delete {
			kind = types.Delete
		}
		return enc.Append(types.Row{Kind: kind, Origin: types.NoOrigin, Vals: c.Vals})
	})
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), enc.Bytes()...), nil
}

// Restore writes the changes of a Snapshot (of a job's last completed
// checkpoint, which may not have been written before the job stopped):
// key gives each change's key. A held buffer seals and commits them, any
// other writes them; either way before anything else is added.
func (b *Buffer) Restore(ctx context.Context, snapshot []byte, cols []types.Type, key func(dst []byte, vals []types.Value) []byte) error {
	if len(snapshot) == 0 {
		return nil
	}
	codec, err := rowcodec.New(cols)
	if err != nil {
		return err
	}
	batch := types.NewBatch(64, len(cols))
	if _, err := codec.Decode(batch, snapshot); err != nil {
		return fmt.Errorf("%s: cannot read the changes its last checkpoint holds: %w", b.opts.What, err)
	}
	var k []byte
	for _, r := range batch.Rows {
		k = key(k[:0], r.Vals)
		if err := b.Add(ctx, k, r.Vals, r.Kind == types.Delete); err != nil {
			return err
		}
	}
	if b.Held() {
		if err := b.Seal(); err != nil {
			return err
		}
		return b.Commit(ctx)
	}
	return b.Flush(ctx)
}
