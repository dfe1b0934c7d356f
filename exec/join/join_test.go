package join

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/state"
	"github.com/sluicesql/sluice/types"
)

// collect is the end of a test chain: it keeps the rows it gets.
type collect struct {
	exec.Passthrough
	rows []string
}

func (c *collect) Open(*exec.Context) error { return nil }
func (c *collect) Process(b *types.Batch) error {
	for _, r := range b.Rows {
		var vals []string
		for i, v := range r.Vals {
			vals = append(vals, formatAny(v, i))
		}
		c.rows = append(c.rows, r.Kind.String()+"["+strings.Join(vals, ", ")+"]")
	}
	return nil
}
func (c *collect) Watermark(int64) error { return nil }
func (c *collect) Finish() error         { return nil }
func (c *collect) Close() error          { return nil }

var twoCols = []types.Type{types.Int, types.String}

func newJoin(t *testing.T, kind Kind, residual func([]types.Value) (bool, error), st state.Backend) (*Operator, *collect) {
	t.Helper()
	return newJoinMode(t, kind, residual, st, plainKeys)
}

// keyMode is how a test join compares its rows, (k INT, v STRING) each.
type keyMode int

const (
	plainKeys     keyMode = iota // k = k
	nullSafeKeys                 // k IS NOT DISTINCT FROM k (INTERSECT, EXCEPT)
	nullAwareKeys                // NOT IN: k = k OR either k IS NULL
	nullAwareCorr                // v = v AND (k = k OR either k IS NULL): a correlated NOT IN
)

func (m keyMode) String() string {
	return [...]string{"plain", "null-safe", "null-aware", "null-aware-correlated"}[m]
}

// matches is the join condition of mode m (without a residual), the
// reference the tests check the operator against; k < 0 is NULL.
func (m keyMode) matches(lk int, lv string, rk int, rv string) bool {
	switch m {
	case nullSafeKeys:
		return lk == rk
	case nullAwareKeys:
		return lk < 0 || rk < 0 || lk == rk
	case nullAwareCorr:
		return lv == rv && (lk < 0 || rk < 0 || lk == rk)
	}
	return lk >= 0 && lk == rk
}

func newJoinMode(t *testing.T, kind Kind, residual func([]types.Value) (bool, error), st state.Backend, m keyMode) (*Operator, *collect) {
	t.Helper()
	return newJoinTTL(t, kind, residual, st, m, 0)
}

func newJoinTTL(t *testing.T, kind Kind, residual func([]types.Value) (bool, error), st state.Backend, m keyMode, ttl time.Duration) (*Operator, *collect) {
	t.Helper()
	out := &collect{}
	keys := []int{0}
	if m == nullAwareCorr {
		keys = []int{1, 0}
	}
	o, err := New(Config{ID: "j", Kind: kind, LeftKeys: keys, RightKeys: keys, Left: twoCols, Right: twoCols,
		Residual: residual, NullSafe: m == nullSafeKeys, NullAware: m >= nullAwareKeys, TTL: ttl, Next: out})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Open(&exec.Context{State: st}); err != nil {
		t.Fatal(err)
	}
	return o, out
}

// in feeds one row to a side: kind, key (NULL if < 0), payload.
func in(t *testing.T, o *Operator, side int, kind types.RowKind, k int, v string, off int64) {
	t.Helper()
	b := types.NewBatch(1, 2)
	vals := b.AddRow(kind, types.Origin{Part: int32(side), Offset: off}, 2)
	if k >= 0 {
		vals[0] = types.IntValue(types.KindInt, int64(k))
	}
	vals[1] = types.StringValue(v)
	if err := o.ProcessInput(side, b); err != nil {
		t.Fatal(err)
	}
}

// TestRetractionSequences pins the exact changelog of outer joins: the
// padded row, its retraction when a match arrives, and its return when
// the match goes.
func TestRetractionSequences(t *testing.T) {
	for _, tc := range []struct {
		kind Kind
		want string
	}{
		{Inner, "+I[1, a, 1, x] -D[1, a, 1, x]"},
		{Left, "+I[1, a, NULL, NULL] -D[1, a, NULL, NULL] +I[1, a, 1, x] -D[1, a, 1, x] +I[NULL, n, NULL, NULL]"},
		{Right, "+I[1, a, 1, x] -D[1, a, 1, x] +I[NULL, NULL, 1, x]"},
		{Full, "+I[1, a, NULL, NULL] -D[1, a, NULL, NULL] +I[1, a, 1, x] -D[1, a, 1, x] +I[NULL, NULL, 1, x] +I[NULL, n, NULL, NULL]"},
		{Semi, "+I[1, a] -D[1, a]"},
		{Anti, "+I[1, a] -D[1, a] +I[NULL, n]"},
	} {
		t.Run(tc.kind.String(), func(t *testing.T) {
			o, out := newJoin(t, tc.kind, nil, nil)
			in(t, o, 0, types.Insert, 1, "a", 1)
			in(t, o, 1, types.Insert, 1, "x", 1)
			in(t, o, 0, types.Delete, 1, "a", 2)
			in(t, o, 0, types.Insert, -1, "n", 3) // a NULL key matches nothing
			if got := strings.Join(out.rows, " "); got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func (k Kind) String() string {
	return [...]string{"inner", "left", "right", "full", "semi", "anti"}[k]
}

// TestAgainstNestedLoops folds random inserts and retractions of both
// sides into every kind of join, with and without a residual condition,
// applies the changelog to a multiset, and compares it with the join
// computed by nested loops over the final inputs. Half of the runs
// checkpoint and restore the operator midway.
func TestAgainstNestedLoops(t *testing.T) {
	for seed := range uint64(60) {
		againstNestedLoops(t, seed, Kind(seed%6), plainKeys)
	}
}

// TestNullKeysAgainstNestedLoops does the same with the keys of INTERSECT
// and EXCEPT (NULL equal to NULL, every kind of join), and with those of
// NOT IN (an ANTI join that a NULL on either side matches), uncorrelated
// and correlated by another key.
func TestNullKeysAgainstNestedLoops(t *testing.T) {
	for seed := range uint64(24) {
		againstNestedLoops(t, seed, Kind(seed%6), nullSafeKeys)
	}
	for seed := range uint64(24) {
		againstNestedLoops(t, seed, Anti, nullAwareKeys)
		againstNestedLoops(t, seed, Anti, nullAwareCorr)
	}
}

// TestNullAwareRecount: a null-aware join without a residual condition
// counts a row's matches one way without a TTL and another with one; a
// run restored from the other's checkpoint (a TTL set or unset since)
// recounts them, and its changelog goes on right. (The TTL is too long
// for any row to expire.)
func TestNullAwareRecount(t *testing.T) {
	for seed := range uint64(12) {
		mode := nullAwareKeys
		if seed%2 == 1 {
			mode = nullAwareCorr
		}
		againstNestedLoopsTTL(t, seed*2, Anti, mode, [2]time.Duration{0, time.Hour})
		againstNestedLoopsTTL(t, seed*2, Anti, mode, [2]time.Duration{time.Hour, 0})
	}
}

func againstNestedLoops(t *testing.T, seed uint64, kind Kind, mode keyMode) {
	againstNestedLoopsTTL(t, seed, kind, mode, [2]time.Duration{})
}

// againstNestedLoopsTTL runs with TTL ttl[0], restored (if seed is even)
// with TTL ttl[1].
func againstNestedLoopsTTL(t *testing.T, seed uint64, kind Kind, mode keyMode, ttl [2]time.Duration) {
	{
		rng := rand.New(rand.NewPCG(seed, 7))
		var residual func([]types.Value) (bool, error)
		if seed%12 >= 6 {
			residual = func(r []types.Value) (bool, error) { return r[1].Str() <= r[3].Str(), nil }
		}
		t.Run(fmt.Sprintf("%s-%s-%d-ttl-%v-%v", mode, kind, seed, ttl[0], ttl[1]), func(t *testing.T) {
			st := state.NewMemory()
			o, out := newJoinTTL(t, kind, residual, st, mode, ttl[0])
			type row struct {
				k int
				v string
			}
			live := [2][]row{}
			var off [2]int64
			steps := 300
			for i := range steps {
				if i == steps/2 && seed%2 == 0 {
					// Checkpoint, and go on in a new operator restored from it.
					if err := o.Checkpoint(); err != nil {
						t.Fatal(err)
					}
					if err := st.Commit("", nil); err != nil {
						t.Fatal(err)
					}
					rows := out.rows
					o, out = newJoinTTL(t, kind, residual, st, mode, ttl[1])
					out.rows = rows
				}
				s := rng.IntN(2)
				off[s]++
				if len(live[s]) > 0 && rng.IntN(3) == 0 {
					j := rng.IntN(len(live[s]))
					r := live[s][j]
					live[s] = append(live[s][:j], live[s][j+1:]...)
					kind := types.Delete
					if rng.IntN(2) == 0 {
						kind = types.UpdateBefore
					}
					in(t, o, s, kind, r.k, r.v, off[s])
					continue
				}
				r := row{k: rng.IntN(6) - 1, v: string(rune('a' + rng.IntN(4)))}
				if seed%3 == 0 { // few keys, many rows each: the buckets' index
					r.k = rng.IntN(2)
					r.v = string(rune('a' + rng.IntN(26)))
				}
				live[s] = append(live[s], r)
				kind := types.Insert
				if rng.IntN(2) == 0 {
					kind = types.UpdateAfter
				}
				in(t, o, s, kind, r.k, r.v, off[s])
			}
			// Apply the changelog.
			got := map[string]int{}
			for _, r := range out.rows {
				body := r[strings.IndexByte(r, '['):]
				if strings.HasPrefix(r, "+") {
					got[body]++
				} else if got[body]--; got[body] < 0 {
					t.Fatalf("%s retracts a row not emitted", r)
				}
			}
			// Nested loops.
			want := map[string]int{}
			str := func(k int, v string) string {
				if k < 0 {
					return "NULL, " + v
				}
				return fmt.Sprintf("%d, %s", k, v)
			}
			matched := [2]map[int]bool{{}, {}}
			for i, l := range live[0] {
				for j, r := range live[1] {
					if !mode.matches(l.k, l.v, r.k, r.v) || residual != nil && !(l.v <= r.v) {
						continue
					}
					if kind != Semi && kind != Anti {
						want["["+str(l.k, l.v)+", "+str(r.k, r.v)+"]"]++
					}
					matched[0][i], matched[1][j] = true, true
				}
			}
			for i, l := range live[0] {
				if kind == Semi && matched[0][i] || kind == Anti && !matched[0][i] {
					want["["+str(l.k, l.v)+"]"]++
				}
			}
			if kind == Left || kind == Full {
				for i, l := range live[0] {
					if !matched[0][i] {
						want["["+str(l.k, l.v)+", NULL, NULL]"]++
					}
				}
			}
			if kind == Right || kind == Full {
				for j, r := range live[1] {
					if !matched[1][j] {
						want["[NULL, NULL, "+str(r.k, r.v)+"]"]++
					}
				}
			}
			var diff []string
			for k, n := range want {
				if got[k] != n {
					diff = append(diff, fmt.Sprintf("%s: got %d, want %d", k, got[k], n))
				}
			}
			for k, n := range got {
				if _, ok := want[k]; !ok && n != 0 {
					diff = append(diff, fmt.Sprintf("%s: got %d, want 0", k, n))
				}
			}
			sort.Strings(diff)
			if len(diff) > 0 {
				t.Fatalf("changelog applied differs from nested loops:\n%s", strings.Join(diff, "\n"))
			}
		})
	}
}

// formatAny formats column i of a test row: (INT, STRING) rows, or
// (INT, TIMESTAMP(3)) ones.
func formatAny(v types.Value, i int) string {
	if v.Kind() == types.KindTimestamp {
		return types.FormatValue(v, timed[1])
	}
	return types.FormatValue(v, twoCols[i%2])
}

// TestTTL: a row not written for the TTL is forgotten (no output), one
// written again stays; the state shrinks.
func TestTTL(t *testing.T) {
	var now int64
	out := &collect{}
	o, err := New(Config{Kind: Left, LeftKeys: []int{0}, RightKeys: []int{0}, Left: twoCols, Right: twoCols,
		TTL: 10 * time.Second, Next: out})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Open(&exec.Context{Now: func() int64 { return now }}); err != nil {
		t.Fatal(err)
	}
	in(t, o, 1, types.Insert, 1, "x", 1) // kept from 0 s
	in(t, o, 1, types.Insert, 2, "y", 2)
	now = 6e6
	in(t, o, 1, types.Insert, 2, "y", 3) // y written again at 6 s
	now = 12e6
	in(t, o, 0, types.Insert, 1, "a", 1) // x expired at 10 s: no match
	in(t, o, 0, types.Insert, 2, "b", 2) // y lives until 16 s
	want := "+I[1, a, NULL, NULL] +I[2, b, 2, y] +I[2, b, 2, y]"
	if got := strings.Join(out.rows, " "); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	// Without input or watermarks, ticks expire the rest.
	if every := o.TickEvery(); every != time.Second {
		t.Fatalf("TickEvery = %v, want 1s", every)
	}
	now = 40e6
	if err := o.Tick(); err != nil {
		t.Fatal(err)
	}
	for _, s := range o.sides {
		for k, b := range s.buckets {
			if len(b.rows) > 0 {
				t.Errorf("key %q still holds %d rows after the TTL", k, len(b.rows))
			}
		}
	}
}
