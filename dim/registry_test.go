package dim_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicesql/sluice/dim"
	"github.com/sluicesql/sluice/types"
)

// genSource is a FullSource whose every load gives n rows (k, k%7, gen),
// k in [0, n), where gen counts the loads: a reload changes every row at
// once, so a lookup that saw a mix of two loads would notice.
type genSource struct {
	id    string
	n     int
	every time.Duration
	gen   atomic.Int64
	fail  atomic.Bool
	loads atomic.Int64
	// closed counts Close calls.
	closed atomic.Int64
}

func (s *genSource) Load(ctx context.Context, emit func(row []types.Value) error) error {
	s.loads.Add(1)
	g := s.gen.Add(1)
	row := make([]types.Value, 3)
	for k := range s.n {
		if s.fail.Load() && k == s.n/2 {
			return errors.New("the source broke off")
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		row[0] = types.BigIntValue(int64(k))
		row[1] = types.StringValue(fmt.Sprint(k % 7))
		row[2] = types.BigIntValue(g)
		if err := emit(row); err != nil {
			return err
		}
	}
	return nil
}

func (s *genSource) ReloadInterval() time.Duration { return s.every }
func (s *genSource) Identity() string              { return s.id }
func (s *genSource) Close() error                  { s.closed.Add(1); return nil }

var genTypes = []types.Type{{Kind: types.KindBigInt}, {Kind: types.KindVarChar}, {Kind: types.KindBigInt}}

func TestSharedTableOneLoadPerKeySet(t *testing.T) {
	r := dim.NewRegistry(dim.Options{})
	ctx := context.Background()
	first := &genSource{id: "t", n: 100}
	h1, err := r.Acquire(ctx, first, genTypes, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	// A second job declaring the same table, by the same key set and by
	// another (given in another order than its canonical one).
	second := &genSource{id: "t", n: 100}
	h2, err := r.Acquire(ctx, second, genTypes, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	third := &genSource{id: "t", n: 100}
	h3, err := r.Acquire(ctx, third, genTypes, []int{1, 0})
	if err != nil {
		t.Fatal(err)
	}
	if h1.Table() != h2.Table() || h1.Table() != h3.Table() || r.Tables() != 1 {
		t.Fatalf("one table expected, registry holds %d", r.Tables())
	}
	if n := first.loads.Load(); n != 2 {
		t.Errorf("loads of the shared source: %d, want 2 (one per key set)", n)
	}
	if second.loads.Load()+third.loads.Load() != 0 || second.closed.Load() != 1 || third.closed.Load() != 1 {
		t.Errorf("the duplicate sources were loaded or left open")
	}
	if st := h1.Table().Stats(); st.KeySets != 2 || st.Rows != 200 || st.Loads != 2 {
		t.Errorf("stats: %+v", st)
	}
	var got []int64
	h1.Lookup([]types.Value{types.IntValue(types.KindInt, 42)}, func(row []types.Value) bool {
		got = append(got, row[0].Int())
		return true
	})
	if len(got) != 1 || got[0] != 42 {
		t.Errorf("lookup of 42 by k: %v", got)
	}
	got = nil
	// Key values in the order the columns were given: (m, k).
	h3.Lookup([]types.Value{types.StringValue("1"), types.BigIntValue(15)}, func(row []types.Value) bool {
		got = append(got, row[0].Int())
		return true
	})
	if len(got) != 1 || got[0] != 15 {
		t.Errorf("lookup of ('1', 15) by (m, k): %v", got)
	}
	if n := h1.Lookup([]types.Value{{}}, func([]types.Value) bool { return true }); n != 0 {
		t.Errorf("a NULL key matched %d rows", n)
	}
	// By a batch, through the permutation of h3: the same rows.
	got = nil
	h3.LookupBatch([][]types.Value{
		{types.StringValue("1"), types.BigIntValue(15)},
		{types.StringValue("2"), types.BigIntValue(15)}, // no such row
		{types.StringValue("0"), types.BigIntValue(7)},
	}, func(i int, row []types.Value) bool {
		got = append(got, int64(i), row[0].Int())
		return true
	})
	if fmt.Sprint(got) != "[0 15 2 7]" {
		t.Errorf("batch lookup by (m, k): %v, want [0 15 2 7]", got)
	}
	// A reload reads the source once for both key sets, and sizes the
	// new indexes by the old.
	if err := h1.Table().Reload(ctx); err != nil {
		t.Fatal(err)
	}
	if n := first.loads.Load(); n != 3 {
		t.Errorf("loads of the shared source after a reload: %d, want 3 (one for every key set)", n)
	}
	if st := h1.Table().Stats(); st.KeySets != 2 || st.Rows != 200 {
		t.Errorf("stats after the reload: %+v", st)
	}
	h1.Release()
	h1.Release() // twice is harmless
	h2.Release()
	if r.Tables() != 1 || first.closed.Load() != 0 {
		t.Fatal("freed while a user remains")
	}
	// Key set (k) has no user left: its index is gone at once.
	if st := h3.Table().Stats(); st.KeySets != 1 || st.Rows != 100 {
		t.Errorf("stats after the last user of a key set left: %+v, want one key set of 100 rows", st)
	}
	if n := h1.Lookup([]types.Value{types.BigIntValue(42)}, func([]types.Value) bool { return true }); n != 0 {
		t.Errorf("a released key set still found %d rows", n)
	}
	h3.Release()
	if r.Tables() != 0 || first.closed.Load() != 1 {
		t.Fatalf("not freed after the last user: %d tables, source closed %d times", r.Tables(), first.closed.Load())
	}
}

// TestReloadUnderLookups looks rows up from several goroutines while the
// table reloads every millisecond: every lookup sees one whole load (all
// rows of one generation), and a failed reload keeps the previous copy.
func TestReloadUnderLookups(t *testing.T) {
	var logged atomic.Int64
	r := dim.NewRegistry(dim.Options{Logf: func(string, ...any) { logged.Add(1) }})
	src := &genSource{id: "t", n: 1000, every: time.Millisecond}
	ctx := context.Background()
	byK, err := r.Acquire(ctx, src, genTypes, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	byM, err := r.Acquire(ctx, &genSource{id: "t"}, genTypes, []int{1})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var lookups atomic.Int64
	errs := make(chan error, 8)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				// By m: every row of one residue, all of one generation.
				m := fmt.Sprint((i + w) % 7)
				var gen int64 = -1
				n := byM.Lookup([]types.Value{types.StringValue(m)}, func(row []types.Value) bool {
					if gen >= 0 && row[2].Int() != gen {
						errs <- fmt.Errorf("one lookup saw generations %d and %d", gen, row[2].Int())
						return false
					}
					gen = row[2].Int()
					return true
				})
				if n < 1000/7 {
					errs <- fmt.Errorf("lookup of m=%s visited %d rows", m, n)
					return
				}
				k := int64(i % 1000)
				if n := byK.Lookup([]types.Value{types.BigIntValue(k)}, func(row []types.Value) bool {
					return row[0].Int() == k
				}); n != 1 {
					errs <- fmt.Errorf("lookup of k=%d found %d rows", k, n)
					return
				}
				// A batch of keys sees one copy too, whole.
				keys := make([][]types.Value, 64)
				for j := range keys {
					keys[j] = []types.Value{types.BigIntValue(int64((i*64 + j) % 1000))}
				}
				gen, seen := int64(-1), 0
				byK.LookupBatch(keys, func(j int, row []types.Value) bool {
					if row[0].Int() != keys[j][0].Int() || (gen >= 0 && row[2].Int() != gen) {
						select { // one error is enough; never block
						case errs <- fmt.Errorf("a batch lookup saw row %v for key %d after generation %d", row, keys[j][0].Int(), gen):
						default:
						}
					}
					gen = row[2].Int()
					seen++
					return true
				})
				if seen != len(keys) {
					errs <- fmt.Errorf("a batch of %d keys found %d rows", len(keys), seen)
					return
				}
				lookups.Add(1)
			}
		}()
	}
	// Reloads come from the table's own ticker and from here, both
	// while the lookups run.
	deadline := time.Now().Add(30 * time.Second)
	for byK.Table().Stats().Reloads < 10 && time.Now().Before(deadline) {
		if err := byK.Table().Reload(ctx); err != nil {
			t.Fatal(err)
		}
	}
	src.fail.Store(true)
	for (byK.Table().Stats().Failures < 2 || logged.Load() < 1) && time.Now().Before(deadline) {
		if err := byK.Table().Reload(ctx); err == nil {
			t.Fatal("a reload of a broken source succeeded")
		}
		time.Sleep(time.Millisecond)
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	st := byK.Table().Stats()
	if st.Reloads < 10 || st.Failures < 2 || logged.Load() < 1 || lookups.Load() == 0 {
		t.Fatalf("reloads %d, failures %d, logged %d, lookups %d", st.Reloads, st.Failures, logged.Load(), lookups.Load())
	}
	// After failures, the last good copy still answers.
	if st.Rows != 2000 || byK.Lookup([]types.Value{types.BigIntValue(7)}, func([]types.Value) bool { return true }) != 1 {
		t.Fatalf("the copy kept after failed reloads: %+v", st)
	}
	byK.Release()
	byM.Release()
	if r.Tables() != 0 || src.closed.Load() != 1 {
		t.Fatal("not freed")
	}
	// The reload goroutine has stopped: no more loads.
	n := src.loads.Load()
	time.Sleep(20 * time.Millisecond)
	if src.loads.Load() != n {
		t.Fatal("still reloading after the last release")
	}
}

func TestFailedFirstLoad(t *testing.T) {
	r := dim.NewRegistry(dim.Options{})
	src := &genSource{id: "t", n: 10}
	src.fail.Store(true)
	if _, err := r.Acquire(context.Background(), src, genTypes, []int{0}); err == nil {
		t.Fatal("no error from a failed load")
	}
	if r.Tables() != 0 || src.closed.Load() != 1 {
		t.Fatalf("a failed acquire left %d tables, closed %d", r.Tables(), src.closed.Load())
	}
}

// TestReloadLogMasksSecrets: the line about a failed reload names the
// table by its identity with the secrets of the URL in it masked.
func TestReloadLogMasksSecrets(t *testing.T) {
	lines := make(chan string, 16)
	r := dim.NewRegistry(dim.Options{Logf: func(format string, args ...any) {
		select {
		case lines <- fmt.Sprintf(format, args...):
		default:
		}
	}})
	src := &genSource{id: "jdbc|jdbc:postgresql://h/db?user=u&password=hunter2-pw|users", n: 10, every: time.Millisecond}
	h, err := r.Acquire(context.Background(), src, genTypes, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	src.fail.Store(true)
	line := <-lines
	if strings.Contains(line, "hunter2") || !strings.Contains(line, "the source broke off") {
		t.Errorf("log line %q", line)
	}
}
