package lookupcache

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/types"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time             { return c.t }
func (c *clock) advance(d time.Duration)    { c.t = c.t.Add(d) }
func row(vals ...types.Value) []types.Value { return vals }

func key(n int64) string {
	return string(AppendKey(nil, []int{0}, []types.Value{types.BigIntValue(n)}))
}

func TestCacheLRUByRows(t *testing.T) {
	c := New(Config{MaxRows: 2, CacheMissingKey: true}, nil)
	c.Put(key(1), [][]types.Value{row(types.StringValue("a"))})
	c.Put(key(2), nil) // a missing key
	if _, ok := c.Get(key(1)); !ok {
		t.Fatal("key 1 not cached")
	}
	c.Put(key(3), [][]types.Value{row(types.StringValue("c"))}) // evicts 2, the least recently used
	if _, ok := c.Get(key(2)); ok {
		t.Fatal("key 2 should have been evicted")
	}
	if rows, ok := c.Get(key(1)); !ok || rows[0][0].Str() != "a" {
		t.Fatalf("key 1: %v %v", rows, ok)
	}
	if rows, ok := c.Get(key(3)); !ok || len(rows) != 1 {
		t.Fatalf("key 3: %v %v", rows, ok)
	}
	s := c.Stats()
	if s.Hits != 3 || s.Misses != 1 || s.Evictions != 1 || s.Rows != 2 || s.Bytes != c.Bytes() {
		t.Fatalf("stats %+v", s)
	}
}

func TestCacheMissingKey(t *testing.T) {
	c := New(Config{MaxRows: 10, CacheMissingKey: true}, nil)
	c.Put(key(1), nil)
	if rows, ok := c.Get(key(1)); !ok || len(rows) != 0 {
		t.Fatalf("missing key not cached: %v %v", rows, ok)
	}
	c = New(Config{MaxRows: 10}, nil)
	c.Put(key(1), nil)
	if _, ok := c.Get(key(1)); ok || c.Len() != 0 {
		t.Fatal("missing key cached without CacheMissingKey")
	}
}

func TestCacheBytes(t *testing.T) {
	big := strings.Repeat("x", 1000)
	one := entrySize(key(1), [][]types.Value{row(types.StringValue(big))})
	if one < 1000 {
		t.Fatalf("entry size %d does not count the string", one)
	}
	c := New(Config{MaxBytes: 3*one + one/2}, nil)
	for i := range int64(10) {
		c.Put(key(i), [][]types.Value{row(types.StringValue(big))})
		if c.Bytes() > 3*one+one/2 {
			t.Fatalf("after %d puts: %d bytes", i+1, c.Bytes())
		}
	}
	if c.Len() != 3 {
		t.Fatalf("len %d, want 3", c.Len())
	}
	for i := range int64(7) {
		if _, ok := c.Get(key(i)); ok {
			t.Fatalf("key %d should have been evicted", i)
		}
	}
	// An entry larger than the bound is not stored, and evicts nothing.
	c.Put(key(100), [][]types.Value{row(types.StringValue(strings.Repeat("y", 10000)))})
	if c.Len() != 3 {
		t.Fatalf("len %d after an oversized put", c.Len())
	}
}

func TestCacheExpiry(t *testing.T) {
	clk := &clock{t: time.Unix(1000, 0)}
	c := New(Config{ExpireAfterWrite: 10 * time.Second}, clk.now)
	c.Put(key(1), [][]types.Value{row(types.BigIntValue(1))})
	clk.advance(9 * time.Second)
	if _, ok := c.Get(key(1)); !ok {
		t.Fatal("expired too early")
	}
	clk.advance(time.Second)
	if _, ok := c.Get(key(1)); ok {
		t.Fatal("not expired after write")
	}
	if s := c.Stats(); s.Expirations != 1 || s.Rows != 0 {
		t.Fatalf("stats %+v", s)
	}

	c = New(Config{ExpireAfterAccess: 10 * time.Second}, clk.now)
	c.Put(key(1), [][]types.Value{row(types.BigIntValue(1))})
	for range 5 {
		clk.advance(8 * time.Second)
		if _, ok := c.Get(key(1)); !ok {
			t.Fatal("expired although accessed")
		}
	}
	clk.advance(10 * time.Second)
	if _, ok := c.Get(key(1)); ok {
		t.Fatal("not expired after access")
	}
}

func TestAppendKey(t *testing.T) {
	a := AppendKey(nil, []int{0, 2}, []types.Value{types.Int32Value(7), types.StringValue("x")})
	b := AppendKey(nil, []int{0, 2}, []types.Value{types.BigIntValue(7), types.StringValue("x")})
	if string(a) != string(b) {
		t.Fatal("INT and BIGINT keys differ")
	}
	c := AppendKey(nil, []int{1, 2}, []types.Value{types.BigIntValue(7), types.StringValue("x")})
	if string(a) == string(c) {
		t.Fatal("key sets are not told apart")
	}
}

func TestParseOptions(t *testing.T) {
	s, err := ParseOptions(connector.Options{})
	if err != nil || s.Mode != None || s.MaxRetries != 3 || !s.Cache.CacheMissingKey {
		t.Fatalf("defaults: %+v %v", s, err)
	}
	s, err = ParseOptions(connector.Options{
		"lookup.cache": "partial", "lookup.partial-cache.max-rows": "100",
		"lookup.partial-cache.max-bytes": "64 mb", "lookup.partial-cache.expire-after-write": "10 min",
		"lookup.partial-cache.expire-after-access": "30s", "lookup.partial-cache.cache-missing-key": "false",
		"lookup.max-retries": "0",
	})
	want := Config{MaxRows: 100, MaxBytes: 64 << 20, ExpireAfterWrite: 10 * time.Minute, ExpireAfterAccess: 30 * time.Second}
	if err != nil || s.Mode != Partial || s.Cache != want || s.MaxRetries != 0 {
		t.Fatalf("partial: %+v %v", s, err)
	}
	s, err = ParseOptions(connector.Options{"lookup.cache.max-rows": "5", "lookup.cache.ttl": "1 s"})
	if err != nil || s.Mode != Partial || s.Cache.MaxRows != 5 || s.Cache.ExpireAfterWrite != time.Second {
		t.Fatalf("legacy: %+v %v", s, err)
	}
	s, err = ParseOptions(connector.Options{"lookup.cache": "FULL", "lookup.full-cache.reload-interval": "1 h"})
	if err != nil || s.Mode != Full || s.ReloadInterval != time.Hour {
		t.Fatalf("full: %+v %v", s, err)
	}
	s, err = ParseOptions(connector.Options{"lookup.cache": "FULL", "refresh-interval": "5 min"})
	if err != nil || s.ReloadInterval != 5*time.Minute {
		t.Fatalf("refresh-interval: %+v %v", s, err)
	}
	for _, bad := range []connector.Options{
		{"lookup.cache": "SOME"},
		{"lookup.cache": "PARTIAL"},
		{"lookup.cache": "PARTIAL", "lookup.partial-cache.max-rows": "-1"},
		{"lookup.cache": "PARTIAL", "lookup.partial-cache.max-bytes": "12 parsecs"},
		{"lookup.max-retries": "-2"},
		{"lookup.partial-cache.expire-after-write": "soon"},
	} {
		if _, err := ParseOptions(bad); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

func TestLookuperCachesAndRetries(t *testing.T) {
	var mu sync.Mutex
	calls, failures := 0, 0
	fetch := func(ctx context.Context, keyCols []int, key []types.Value, dst [][]types.Value) ([][]types.Value, error) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if failures > 0 {
			failures--
			return dst, errors.New("connection reset")
		}
		if key[0].Int() < 0 {
			return dst, Permanent(errors.New("bad key"))
		}
		if key[0].Int()%2 == 1 {
			return dst, nil // odd keys have no rows
		}
		return append(dst, row(key[0], types.StringValue("v"))), nil
	}
	s := Settings{Mode: Partial, Cache: Config{MaxRows: 100, CacheMissingKey: true}, MaxRetries: 2}
	l := NewLookuper(s, fetch, nil)
	l.backoff = time.Millisecond
	ctx := context.Background()
	k := func(n int64) []types.Value { return []types.Value{types.BigIntValue(n)} }
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range int64(20) {
				rows, err := l.Lookup(ctx, []int{0}, k(i), nil)
				if err != nil {
					t.Error(err)
					return
				}
				if want := 1 - int(i%2); len(rows) != want {
					t.Errorf("goroutine %d key %d: %d rows", g, i, len(rows))
				}
			}
		}()
	}
	wg.Wait()
	st := l.CacheStats()
	if st.Hits+st.Misses != 80 || st.Rows != 20 || calls < 20 || calls > 80 {
		t.Fatalf("stats %+v, %d calls", st, calls)
	}
	// Two failures, two retries: it succeeds.
	failures = 2
	if rows, err := l.Lookup(ctx, []int{0}, k(100), nil); err != nil || len(rows) != 1 {
		t.Fatalf("with retries: %v %v", rows, err)
	}
	failures = 3
	if _, err := l.Lookup(ctx, []int{0}, k(102), nil); err == nil || !strings.Contains(err.Error(), "after 2 retries") {
		t.Fatalf("3 failures: %v", err)
	}
	failures = 0
	before := calls
	if rows, err := l.Lookup(ctx, []int{0}, []types.Value{types.NullValue}, nil); err != nil || len(rows) != 0 || calls != before {
		t.Fatalf("a NULL key: %v %v, %d calls", rows, err, calls-before)
	}
	if _, err := l.Lookup(ctx, []int{0}, k(-1), nil); err == nil || calls != before+1 {
		t.Fatalf("a permanent error is retried: %v, %d calls", err, calls-before)
	}
}

// TestLookupBatch looks batches up through a batch fetch: keys the cache
// holds and keys a batch repeats are not fetched, the others go in one
// call, rows come back in the order of the keys, and failures are retried
// or returned.
func TestLookupBatch(t *testing.T) {
	var calls, keysFetched, failures int
	fetchBatch := func(_ context.Context, keyCols []int, keys [][]types.Value, add func(int, []types.Value)) error {
		calls++
		keysFetched += len(keys)
		seen := map[int64]bool{}
		for j, key := range keys {
			if key[0].IsNull() || seen[key[0].Int()] {
				t.Errorf("fetched a NULL or repeated key: %v", key)
			}
			seen[key[0].Int()] = true
			if j == len(keys)/2 && failures > 0 {
				failures--
				add(j, row(key[0], types.StringValue("half a batch, then a failure")))
				return errors.New("connection reset")
			}
			if key[0].Int() < 0 {
				return Permanent(errors.New("bad key"))
			}
			for r := range key[0].Int() % 3 { // keys 0, 3, 6, ... have no row
				add(j, row(key[0], types.StringValue(fmt.Sprint("v", r))))
			}
		}
		return nil
	}
	single := func(ctx context.Context, keyCols []int, key []types.Value, dst [][]types.Value) ([][]types.Value, error) {
		err := fetchBatch(ctx, keyCols, [][]types.Value{key}, func(_ int, r []types.Value) { dst = append(dst, r) })
		return dst, err
	}
	for _, mode := range []Mode{None, Partial} {
		calls, keysFetched = 0, 0
		s := Settings{Mode: mode, Cache: Config{MaxRows: 100, CacheMissingKey: true}, MaxRetries: 2}
		l := NewLookuper(s, single, nil).WithBatch(fetchBatch, 0)
		l.backoff = time.Millisecond
		ctx := context.Background()
		lookup := func(ns ...int64) (string, error) {
			keys := make([][]types.Value, len(ns))
			for i, n := range ns {
				keys[i] = []types.Value{types.BigIntValue(n)}
				if n == 99 {
					keys[i][0] = types.NullValue
				}
			}
			var got []string
			err := l.LookupBatch(ctx, []int{0}, keys, func(i int, r []types.Value) bool {
				got = append(got, fmt.Sprintf("%d:%s", i, r[1].Str()))
				return true
			})
			return strings.Join(got, " "), err
		}
		got, err := lookup(1, 2, 3, 2, 99, 4)
		if want := "0:v0 1:v0 1:v1 3:v0 3:v1 5:v0"; err != nil || got != want {
			t.Fatalf("%v: got %q (%v), want %q", mode, got, err, want)
		}
		if calls != 1 || keysFetched != 4 {
			t.Fatalf("%v: %d calls for %d keys, want 1 for 4 (1, 2, 3, 4)", mode, calls, keysFetched)
		}
		// Again, with a new key: a cache fetches only that one.
		if got, err := lookup(4, 5, 1); err != nil || got != "0:v0 1:v0 1:v1 2:v0" {
			t.Fatalf("%v: second batch: %q, %v", mode, got, err)
		}
		if want := map[Mode]int{None: 7, Partial: 5}[mode]; keysFetched != want || calls != 2 {
			t.Fatalf("%v: %d keys fetched in %d calls, want %d in 2", mode, keysFetched, calls, want)
		}
		// A failure halfway is retried; what the failed call added is
		// dropped.
		failures = 2
		if got, err := lookup(10, 11, 13); err != nil || got != "0:v0 1:v0 1:v1 2:v0" {
			t.Fatalf("%v: with retries: %q, %v", mode, got, err)
		}
		failures = 3
		if _, err := lookup(20, 21, 22); err == nil || !strings.Contains(err.Error(), "after 2 retries") {
			t.Fatalf("%v: 3 failures: %v", mode, err)
		}
		failures = 0
		before := calls
		if _, err := lookup(30, -1); err == nil || calls != before+1 {
			t.Fatalf("%v: a permanent error: %v after %d calls", mode, err, calls-before)
		}
		st := l.CacheStats()
		if st.Fetches != int64(calls) || st.Fetched != int64(keysFetched) {
			t.Fatalf("%v: stats %+v; %d calls for %d keys", mode, st, calls, keysFetched)
		}
		if mode == Partial && (st.Hits != 3 || st.Misses != 13) {
			t.Fatalf("partial: %d hits, %d misses; want 3 (a repeat, 4 and 1) and 13", st.Hits, st.Misses)
		}
	}
}

func BenchmarkCache(b *testing.B) {
	for _, n := range []int{1000, 100000} {
		c := New(Config{MaxRows: int64(n)}, nil)
		keys := make([]string, n)
		for i := range keys {
			keys[i] = key(int64(i))
			c.Put(keys[i], [][]types.Value{row(types.BigIntValue(int64(i)), types.StringValue("value"))})
		}
		b.Run(fmt.Sprintf("hit/%d", n), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, ok := c.Get(keys[i%n]); !ok {
					b.Fatal("miss")
				}
				i++
			}
		})
		b.Run(fmt.Sprintf("put-evict/%d", n), func(b *testing.B) {
			b.ReportAllocs()
			rows := [][]types.Value{row(types.BigIntValue(1), types.StringValue("value"))}
			i := 0
			for b.Loop() {
				c.Put(keys[i%n]+"x", rows)
				i++
			}
		})
	}
}
