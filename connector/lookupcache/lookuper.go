package lookupcache

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicesql/sluice/types"
)

// Fetch appends to dst the rows of the table whose columns keyCols equal
// key, as connector.KeyLookuper.Lookup does, without a cache.
type Fetch func(ctx context.Context, keyCols []int, key []types.Value, dst [][]types.Value) ([][]types.Value, error)

// FetchBatch fetches the rows of many keys at once (no NULL in any, no key
// twice): it calls add with the position in keys and each row of that key
// (the row is add's to keep). On an error, what was added is discarded.
type FetchBatch func(ctx context.Context, keyCols []int, keys [][]types.Value, add func(i int, row []types.Value)) error

// permanent marks an error that trying again cannot fix.
type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

// Permanent marks err as one that a retry cannot fix (a value that does
// not fit its column, a key set the table cannot be looked up by):
// Lookuper returns it at once.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanent{err}
}

// IsPermanent reports whether err was marked with Permanent.
func IsPermanent(err error) bool {
	var p permanent
	return errors.As(err, &p)
}

// Lookuper puts a Cache (in PARTIAL mode) and retries in front of a
// Fetch. It is safe for concurrent use: the cache is guarded by a mutex
// that is not held while fetching, so two callers may fetch one key at
// once (the later Put wins; both results are correct).
type Lookuper struct {
	fetch      Fetch
	fetchBatch FetchBatch // nil: a fetch per key
	batchMax   int        // the most keys a fetchBatch call takes
	retries    int
	backoff    time.Duration

	// Round trips to the table's system, and the keys they asked for;
	// keys a batch repeats (answered with the batch's first).
	fetches, fetched, repeats atomic.Int64

	mu    sync.Mutex
	cache *Cache // nil: no cache
	buf   []byte
}

// NewLookuper returns a Lookuper over fetch with the cache and retries of
// s. now is the cache's clock (nil: time.Now).
func NewLookuper(s Settings, fetch Fetch, now func() time.Time) *Lookuper {
	l := &Lookuper{fetch: fetch, retries: s.MaxRetries, backoff: 100 * time.Millisecond}
	if s.Mode == Partial {
		l.cache = New(s.Cache, now)
	}
	return l
}

// WithBatch makes LookupBatch fetch the keys it misses with fb, a round
// trip for up to max keys (0: any number); it returns l. Call it before
// any lookup.
func (l *Lookuper) WithBatch(fb FetchBatch, max int) *Lookuper {
	l.fetchBatch, l.batchMax = fb, max
	return l
}

// Lookup implements connector.KeyLookuper.Lookup. A key with a NULL
// matches no row (the engine does not ask, but SQL says so).
func (l *Lookuper) Lookup(ctx context.Context, keyCols []int, key []types.Value, dst [][]types.Value) ([][]types.Value, error) {
	for _, v := range key {
		if v.IsNull() {
			return dst, nil
		}
	}
	if l.cache == nil {
		return l.fetchRetrying(ctx, keyCols, key, dst)
	}
	l.mu.Lock()
	l.buf = AppendKey(l.buf[:0], keyCols, key)
	rows, ok := l.cache.Get(string(l.buf))
	l.mu.Unlock()
	if ok {
		return append(dst, rows...), nil
	}
	got, err := l.fetchRetrying(ctx, keyCols, key, nil)
	if err != nil {
		return dst, err
	}
	l.mu.Lock()
	l.buf = AppendKey(l.buf[:0], keyCols, key)
	l.cache.Put(string(l.buf), got)
	l.mu.Unlock()
	return append(dst, got...), nil
}

// LookupBatch implements connector.BatchKeyLookuper: the keys the cache
// does not hold are fetched once each, however often the batch repeats
// them, and with the batch fetch in one round trip (or a few) for all.
func (l *Lookuper) LookupBatch(ctx context.Context, keyCols []int, keys [][]types.Value, visit func(i int, row []types.Value) bool) error {
	rows := make([][][]types.Value, len(keys))
	// The keys to fetch, each once: encoded, and the first position of
	// each in keys; of[i] is key i's place among them (-1: none).
	var todo [][]types.Value
	var enc []string
	of := make([]int, len(keys))
	first := map[string]int{}
	l.mu.Lock()
	for i, key := range keys {
		of[i] = -1
		if hasNull(key) {
			continue
		}
		l.buf = AppendKey(l.buf[:0], keyCols, key)
		if j, ok := first[string(l.buf)]; ok {
			of[i] = j
			l.repeats.Add(1)
			continue
		}
		if l.cache != nil {
			if r, ok := l.cache.Get(string(l.buf)); ok {
				rows[i] = r
				continue
			}
		}
		k := string(l.buf)
		first[k] = len(todo)
		of[i] = len(todo)
		todo = append(todo, key)
		enc = append(enc, k)
	}
	l.mu.Unlock()
	if len(todo) > 0 {
		got, err := l.fetchAll(ctx, keyCols, todo)
		if err != nil {
			return err
		}
		if l.cache != nil {
			l.mu.Lock()
			for j, r := range got {
				l.cache.Put(enc[j], r)
			}
			l.mu.Unlock()
		}
		for i, j := range of {
			if j >= 0 {
				rows[i] = got[j]
			}
		}
	}
	for i, rs := range rows {
		for _, r := range rs {
			if !visit(i, r) {
				break
			}
		}
	}
	return nil
}

// fetchAll fetches the rows of every key of keys (distinct, no NULL).
func (l *Lookuper) fetchAll(ctx context.Context, keyCols []int, keys [][]types.Value) ([][][]types.Value, error) {
	got := make([][][]types.Value, len(keys))
	if l.fetchBatch == nil || len(keys) == 1 {
		for j, key := range keys {
			r, err := l.fetchRetrying(ctx, keyCols, key, nil)
			if err != nil {
				return nil, err
			}
			got[j] = r
		}
		return got, nil
	}
	size := len(keys)
	if l.batchMax > 0 {
		size = l.batchMax
	}
	for start := 0; start < len(keys); start += size {
		chunk := keys[start:min(start+size, len(keys))]
		part := got[start : start+len(chunk)]
		err := l.retrying(ctx, func() error {
			clear(part)
			l.fetches.Add(1)
			l.fetched.Add(int64(len(chunk)))
			return l.fetchBatch(ctx, keyCols, chunk, func(j int, row []types.Value) {
				part[j] = append(part[j], row)
			})
		})
		if err != nil {
			return nil, err
		}
	}
	return got, nil
}

func hasNull(key []types.Value) bool {
	for _, v := range key {
		if v.IsNull() {
			return true
		}
	}
	return false
}

func (l *Lookuper) fetchRetrying(ctx context.Context, keyCols []int, key []types.Value, dst [][]types.Value) ([][]types.Value, error) {
	n := len(dst)
	err := l.retrying(ctx, func() error {
		l.fetches.Add(1)
		l.fetched.Add(1)
		var err error
		dst, err = l.fetch(ctx, keyCols, key, dst[:n])
		return err
	})
	if err != nil {
		return dst[:n], err
	}
	return dst, nil
}

// retrying calls f until it succeeds, fails for good (a permanent error,
// the retries spent, ctx done), waiting a little longer before each retry.
func (l *Lookuper) retrying(ctx context.Context, f func() error) error {
	for attempt := 0; ; attempt++ {
		err := f()
		if err == nil {
			return nil
		}
		if attempt >= l.retries || IsPermanent(err) || ctx.Err() != nil {
			if attempt > 0 {
				err = fmt.Errorf("%w (after %d retries)", err, attempt)
			}
			return err
		}
		t := time.NewTimer(l.backoff * time.Duration(attempt+1))
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

// CacheStats returns the cache's counters (zero without a cache) and the
// round trips to the table's system; safe from any goroutine.
func (l *Lookuper) CacheStats() Stats {
	var s Stats
	if l.cache != nil {
		s = l.cache.Stats()
		s.Hits += l.repeats.Load() // answered without a fetch, as hits are
	}
	s.Fetches, s.Fetched = l.fetches.Load(), l.fetched.Load()
	return s
}

// Cached is implemented by lookup sources with a per-job cache, for the
// engine's metrics.
type Cached interface {
	CacheStats() Stats
}

// EnvClock turns a connector.Env's processing-time clock (microseconds
// since the epoch; nil allowed) into a clock for New.
func EnvClock(now func() int64) func() time.Time {
	if now == nil {
		return nil
	}
	return func() time.Time { return time.UnixMicro(now()) }
}
