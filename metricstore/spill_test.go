package metricstore

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"

	"github.com/sluicesql/sluice/types"
)

// Beyond the budget, records move to the spill directory; they read
// back the same, a change brings one back into memory, and a delete, a
// redefinition or a reset applies to them as to the others.
func TestSpill(t *testing.T) {
	const n = 3000
	dir := filepath.Join(t.TempDir(), "spill")
	s := open(t, Options{Dir: dir, MemoryBudget: 64 << 10}, userStats())
	var keys [][]types.Value
	var want []string
	for i := range n {
		k := key(fmt.Sprint("user-", i), int32(i%5))
		keys = append(keys, k)
		commit(t, s, "user_stats", set(k, int64(i), types.BigIntValue(int64(i)), types.DecimalValue(int64(i), 2), types.StringValue(fmt.Sprint("/p", i))))
		want = append(want, fmt.Sprintf("user-%d,%d: clicks=%d@%d spend=%s@%d last_page=/p%d@%d",
			i, i%5, i, i, types.FormatValue(types.DecimalValue(int64(i), 2), types.Decimal(10, 2)), i, i, i))
	}
	st := s.Stats()
	if st.SpilledKeys < n/2 || st.HotKeys+st.SpilledKeys != n || st.HotBytes > 64<<10 {
		t.Fatalf("after %d keys: %+v", n, st)
	}
	wantLines(t, showResult(read(t, s, "user_stats", keys)), want)

	// Changes to spilled keys: a masked one keeps the spilled values, a
	// delete removes the key.
	first := keys[0]
	commit(t, s, "user_stats", clicks("user-0", 0, 100, 5000), Change{Key: keys[1], Delete: true})
	want[0] = "user-0,0: clicks=100@5000 spend=0.00@0 last_page=/p0@0"
	want[1] = "user-1,1: clicks=NOT_FOUND spend=NOT_FOUND last_page=NOT_FOUND"
	wantLines(t, showResult(read(t, s, "user_stats", keys)), want)
	if st := s.Stats(); st.HotKeys+st.SpilledKeys != n-1 {
		t.Errorf("after a delete: %+v", st)
	}

	// A snapshot holds the spilled keys too.
	m := newMirror()
	drain(t, subscribe(t, s, "user_stats", SubscribeOptions{Snapshot: true}), m)
	got, _, names := stored(t, s, "user_stats", keys)
	wantLines(t, m.lines(names), got)
	if len(got) != n-1 {
		t.Errorf("%d keys in the snapshot", len(got))
	}

	// Records spilled in the old layout are read in the new one.
	g := userStats()
	g.Metrics = []Metric{{Name: "last_page", Type: types.String}, {Name: "clicks", Type: types.BigInt}}
	if err := s.Define(g); err != nil {
		t.Fatal(err)
	}
	r := read(t, s, "user_stats", [][]types.Value{first, keys[n-1]})
	wantLines(t, showResult(r), []string{
		"user-0,0: last_page=/p0@0 clicks=100@5000",
		fmt.Sprintf("user-%d,%d: last_page=/p%d@%d clicks=%d@%d", n-1, (n-1)%5, n-1, n-1, n-1, n-1),
	})

	if err := s.Reset("user_stats"); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.HotKeys != 0 || st.SpilledKeys != 0 {
		t.Errorf("after a reset: %+v", st)
	}
	r = read(t, s, "user_stats", keys[:3])
	wantLines(t, showResult(r), []string{
		"user-0,0: last_page=NOT_FOUND clicks=NOT_FOUND",
		"user-1,1: last_page=NOT_FOUND clicks=NOT_FOUND",
		"user-2,2: last_page=NOT_FOUND clicks=NOT_FOUND",
	})
	commit(t, s, "user_stats", Change{Key: first, Values: []types.Value{types.StringValue("/x"), types.BigIntValue(1)}, EventTime: 1})

	// The directory is a cache: a store opened over it starts empty.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := open(t, Options{Dir: dir}, g)
	r = read(t, s2, "user_stats", [][]types.Value{first})
	wantLines(t, showResult(r), []string{"user-0,0: last_page=NOT_FOUND clicks=NOT_FOUND"})
}

// Keys read often stay in memory, or come back there: a read of a key
// in the spill has the next commit bring it back.
func TestSpillKeepsWhatIsRead(t *testing.T) {
	s := open(t, Options{Dir: t.TempDir(), MemoryBudget: 128 << 10}, userStats())
	hotKeys := [][]types.Value{key("hot-a", 1), key("hot-b", 1)}
	for i := range 20000 {
		if i%200 == 0 {
			read(t, s, "user_stats", hotKeys)
		}
		k := key(fmt.Sprint("u", i), 1)
		if i < 2 {
			k = hotKeys[i]
		}
		commit(t, s, "user_stats", clicks(string(k[0].Str()), 1, 1, 1))
	}
	read(t, s, "user_stats", hotKeys)
	commit(t, s, "user_stats", clicks("last", 1, 1, 1))
	g, err := s.group("user_stats")
	if err != nil {
		t.Fatal(err)
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	for _, k := range hotKeys {
		if _, ok := g.t.find(appendKey(nil, k)); !ok {
			t.Errorf("key %s, read often, was moved out", k[0].Str())
		}
	}
	if g.spilled < 10000 {
		t.Errorf("only %d keys spilled", g.spilled)
	}
}

// Two groups committed to at once, with a budget that makes every
// commit spill (the eviction of one group runs while the other stages
// its changes), and readers that bring spilled keys back: each group
// ends holding exactly what its commits made it.
func TestConcurrentCommitsWithSpill(t *testing.T) {
	s := open(t, Options{Dir: t.TempDir(), MemoryBudget: 32 << 10})
	for _, name := range []string{"a", "b"} {
		g := userStats()
		g.Name = name
		if err := s.Define(g); err != nil {
			t.Fatal(err)
		}
	}
	var keys [][]types.Value
	for i := range 400 {
		keys = append(keys, key(fmt.Sprint("u", i), 1))
	}
	done := make(chan struct{})
	var readers sync.WaitGroup
	for r := range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			rnd := rand.New(rand.NewPCG(uint64(r), 7))
			for {
				select {
				case <-done:
					return
				default:
				}
				var ks [][]types.Value
				for range 20 {
					ks = append(ks, keys[rnd.IntN(len(keys))])
				}
				if _, err := s.Read([]string{"a", "b"}[r], ks, nil); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	models := make([]map[string]int64, 2)
	var writers sync.WaitGroup
	for w, name := range []string{"a", "b"} {
		models[w] = map[string]int64{}
		writers.Add(1)
		go func() {
			defer writers.Done()
			rnd := rand.New(rand.NewPCG(uint64(w), 3))
			for step := range 300 {
				var changes []Change
				for range 1 + rnd.IntN(30) {
					i := rnd.IntN(len(keys))
					k := fmt.Sprint("u", i)
					switch {
					case rnd.IntN(8) == 0:
						changes = append(changes, Change{Key: keys[i], Delete: true})
						delete(models[w], k)
					case rnd.IntN(2) == 0:
						n := int64(step*1000 + rnd.IntN(1000))
						changes = append(changes, clicks(k, 1, n, int64(step)))
						models[w][k] = n
					default:
						n := int64(step*1000 + rnd.IntN(1000))
						changes = append(changes, set(keys[i], int64(step), types.BigIntValue(n), types.DecimalValue(n, 2), types.StringValue(k)))
						models[w][k] = n
					}
				}
				if err := s.Commit(name, changes); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	writers.Wait()
	close(done)
	readers.Wait()
	if st := s.Stats(); st.SpilledKeys == 0 {
		t.Fatalf("nothing spilled: %+v", st)
	}
	for w, name := range []string{"a", "b"} {
		r := read(t, s, name, keys, "clicks")
		for i, e := range r.Entries {
			k := fmt.Sprint("u", i)
			want, ok := models[w][k]
			switch {
			case ok != (e.Statuses[0] == Present):
				t.Errorf("group %s key %s: %s, want present %v", name, k, show(e, r.Metrics), ok)
			case ok && e.Values[0].Int() != want:
				t.Errorf("group %s key %s: %s, want %d", name, k, show(e, r.Metrics), want)
			}
		}
	}
}
