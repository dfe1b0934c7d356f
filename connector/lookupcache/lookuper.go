package lookupcache

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sluicesql/sluice/types"
)

// Fetch appends to dst the rows of the table whose columns keyCols equal
// key, as connector.KeyLookuper.Lookup does, without a cache.
type Fetch func(ctx context.Context, keyCols []int, key []types.Value, dst [][]types.Value) ([][]types.Value, error)

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
	fetch   Fetch
	retries int
	backoff time.Duration

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

func (l *Lookuper) fetchRetrying(ctx context.Context, keyCols []int, key []types.Value, dst [][]types.Value) ([][]types.Value, error) {
	n := len(dst)
	for attempt := 0; ; attempt++ {
		out, err := l.fetch(ctx, keyCols, key, dst[:n])
		if err == nil {
			return out, nil
		}
		if attempt >= l.retries || IsPermanent(err) || ctx.Err() != nil {
			if attempt > 0 {
				err = fmt.Errorf("%w (after %d retries)", err, attempt)
			}
			return dst[:n], err
		}
		t := time.NewTimer(l.backoff * time.Duration(attempt+1))
		select {
		case <-ctx.Done():
			t.Stop()
			return dst[:n], err
		case <-t.C:
		}
	}
}

// CacheStats returns the cache's counters (zero without a cache); safe
// from any goroutine.
func (l *Lookuper) CacheStats() Stats {
	if l.cache == nil {
		return Stats{}
	}
	return l.cache.Stats()
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
