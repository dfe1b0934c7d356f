package metricstore

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sluicesql/sluice/types"
)

// userStats is the group most tests use: keyed by a user and a region,
// three metrics of different kinds.
func userStats() Group {
	return Group{Name: "user_stats", Version: 1,
		Keys: []types.Column{{Name: "user_id", Type: types.String}, {Name: "region", Type: types.Int}},
		Metrics: []Metric{
			{Name: "clicks", Type: types.BigInt},
			{Name: "spend", Type: types.Decimal(10, 2)},
			{Name: "last_page", Type: types.String},
		}}
}

func key(user string, region int32) []types.Value {
	return []types.Value{types.StringValue(user), types.Int32Value(region)}
}

func open(t testing.TB, opts Options, groups ...Group) *Store {
	t.Helper()
	s, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	for _, g := range groups {
		if err := s.Define(g); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func commit(t testing.TB, s *Store, group string, changes ...Change) {
	t.Helper()
	if err := s.Commit(group, changes); err != nil {
		t.Fatal(err)
	}
}

func set(k []types.Value, at int64, vals ...types.Value) Change {
	return Change{Key: k, Values: vals, EventTime: at}
}

func read(t testing.TB, s *Store, group string, keys [][]types.Value, metrics ...string) *Result {
	t.Helper()
	r, err := s.Read(group, keys, metrics)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// show prints an entry as "key: value/STATUS@time ...", the form the
// tests compare.
func show(e Entry, metrics []Metric) string {
	var b strings.Builder
	for i, v := range e.Key {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(types.FormatValue(v, types.Type{}))
	}
	b.WriteByte(':')
	if e.Deleted {
		return b.String() + " deleted"
	}
	for i := range e.Values {
		fmt.Fprintf(&b, " %s=", metrics[i].Name)
		switch e.Statuses[i] {
		case NotFound:
			b.WriteString("NOT_FOUND")
			continue
		case NullValue:
			b.WriteString("NULL")
		default:
			b.WriteString(types.FormatValue(e.Values[i], metrics[i].Type))
		}
		fmt.Fprintf(&b, "@%d", e.EventTimes[i])
	}
	return b.String()
}

func showResult(r *Result) []string {
	out := make([]string, len(r.Entries))
	for i, e := range r.Entries {
		out[i] = show(e, r.Metrics)
	}
	return out
}

func wantLines(t *testing.T, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func TestReadStatusesAndTimes(t *testing.T) {
	s := open(t, Options{}, userStats())
	commit(t, s, "user_stats",
		set(key("ann", 1), 1000, types.BigIntValue(3), types.DecimalValue(1250, 2), types.StringValue("/home")),
		set(key("bob", 2), 2000, types.BigIntValue(7), types.Value{}, types.StringValue("/cart")),
	)
	r := read(t, s, "user_stats", [][]types.Value{key("bob", 2), key("cid", 1), key("ann", 1), key("ann", 2)})
	if r.Group != "user_stats" || r.Version != 1 || len(r.Metrics) != 3 || r.Token.IsZero() {
		t.Fatalf("metadata: %+v", r)
	}
	wantLines(t, showResult(r), []string{
		"bob,2: clicks=7@2000 spend=NULL@2000 last_page=/cart@2000",
		"cid,1: clicks=NOT_FOUND spend=NOT_FOUND last_page=NOT_FOUND",
		"ann,1: clicks=3@1000 spend=12.50@1000 last_page=/home@1000",
		"ann,2: clicks=NOT_FOUND spend=NOT_FOUND last_page=NOT_FOUND",
	})
	if r.Entries[0].Statuses[1] != NullValue || r.Entries[0].Statuses[0] != Present {
		t.Errorf("statuses %v", r.Entries[0].Statuses)
	}

	// Metrics chosen and ordered; a BIGINT region finds the INT key.
	r = read(t, s, "user_stats", [][]types.Value{{types.StringValue("ann"), types.BigIntValue(1)}}, "last_page", "clicks")
	wantLines(t, showResult(r), []string{"ann,1: last_page=/home@1000 clicks=3@1000"})

	// Later commits replace values and times.
	commit(t, s, "user_stats", set(key("ann", 1), 5000, types.BigIntValue(4), types.DecimalValue(1300, 2), types.StringValue("/buy")))
	r2 := read(t, s, "user_stats", [][]types.Value{key("ann", 1)}, "clicks")
	wantLines(t, showResult(r2), []string{"ann,1: clicks=4@5000"})
	if r2.Token == r.Token {
		t.Errorf("token did not move: %v", r2.Token)
	}
}

func TestReadErrors(t *testing.T) {
	s := open(t, Options{}, userStats())
	for _, tc := range []struct {
		group   string
		keys    [][]types.Value
		metrics []string
		want    string
	}{
		{"user_stat", nil, nil, `no metric group named "user_stat" (did you mean "user_stats"?)`},
		{"user_stats", nil, []string{"click"}, `metric group user_stats has no metric named "click" (did you mean "clicks"?)`},
		{"user_stats", [][]types.Value{key("a", 1), {types.StringValue("a")}}, nil, "key 1 has 1 values; metric group user_stats is keyed by (user_id, region)"},
		{"user_stats", [][]types.Value{{types.BigIntValue(1), types.BigIntValue(1)}}, nil, "key 0: key column user_id: a BIGINT value where the type is STRING"},
	} {
		_, err := s.Read(tc.group, tc.keys, tc.metrics)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Read(%s, %v, %v): %v, want %q", tc.group, tc.keys, tc.metrics, err, tc.want)
		}
		var nf *NotFoundError
		if errors.As(err, &nf) != (tc.group != "user_stats") || errors.Is(err, ErrInvalid) == (tc.group != "user_stats") {
			t.Errorf("Read(%s): error %T %v is of the wrong kind", tc.group, err, err)
		}
	}
}

func TestMaskKeepsOtherValues(t *testing.T) {
	s := open(t, Options{}, userStats())
	commit(t, s, "user_stats", set(key("ann", 1), 1000, types.BigIntValue(3), types.DecimalValue(100, 2), types.StringValue("/a")))
	commit(t, s, "user_stats", Change{Key: key("ann", 1), Values: []types.Value{types.BigIntValue(4), {}, {}},
		Mask: []bool{true, false, false}, EventTime: 9000})
	// A masked change of a key without values sets only its metrics.
	commit(t, s, "user_stats", Change{Key: key("bob", 1), Values: []types.Value{{}, {}, types.StringValue("/b")},
		Mask: []bool{false, false, true}, EventTime: 7})
	wantLines(t, showResult(read(t, s, "user_stats", [][]types.Value{key("ann", 1), key("bob", 1)})), []string{
		"ann,1: clicks=4@9000 spend=1.00@1000 last_page=/a@1000",
		"bob,1: clicks=NOT_FOUND spend=NOT_FOUND last_page=/b@7",
	})
}

func TestDeleteAndRepeatedKeys(t *testing.T) {
	s := open(t, Options{}, userStats())
	v := func(n int64) []types.Value {
		return []types.Value{types.BigIntValue(n), types.DecimalValue(n*100, 2), types.StringValue(fmt.Sprint(n))}
	}
	commit(t, s, "user_stats",
		Change{Key: key("ann", 1), Values: v(1), EventTime: 1},
		Change{Key: key("bob", 1), Values: v(2), EventTime: 2},
		Change{Key: key("ann", 1), Values: []types.Value{types.BigIntValue(5), {}, {}}, Mask: []bool{true, false, false}, EventTime: 3},
		Change{Key: key("bob", 1), Delete: true},
		Change{Key: key("cid", 1), Values: v(6), EventTime: 6},
		Change{Key: key("cid", 1), Delete: true},
		Change{Key: key("cid", 1), Values: []types.Value{types.BigIntValue(7), {}, {}}, Mask: []bool{true, false, false}, EventTime: 7},
	)
	wantLines(t, showResult(read(t, s, "user_stats", [][]types.Value{key("ann", 1), key("bob", 1), key("cid", 1)})), []string{
		"ann,1: clicks=5@3 spend=1.00@1 last_page=1@1",
		"bob,1: clicks=NOT_FOUND spend=NOT_FOUND last_page=NOT_FOUND",
		"cid,1: clicks=7@7 spend=NOT_FOUND last_page=NOT_FOUND",
	})
	if st := s.Stats(); st.HotKeys != 2 {
		t.Errorf("%d keys held, want 2", st.HotKeys)
	}
}

// A change that does not fit the definition fails the commit before
// anything of it is visible.
func TestCommitAllOrNothing(t *testing.T) {
	s := open(t, Options{}, userStats())
	good := set(key("ann", 1), 1, types.BigIntValue(1), types.DecimalValue(1, 0), types.StringValue("x"))
	for _, bad := range []struct {
		c    Change
		want string
	}{
		{set(key("bob", 1), 1, types.BigIntValue(1)), "change 1 has 1 values, the group 3 metrics"},
		{set(key("bob", 1), 1, types.StringValue("1"), types.Value{}, types.Value{}), "change 1: metric clicks: a VARCHAR value where the type is BIGINT"},
		{set([]types.Value{types.StringValue("bob")}, 1, types.BigIntValue(1), types.Value{}, types.Value{}), "change 1 has 1 values; metric group user_stats is keyed by (user_id, region)"},
		{Change{Key: key("bob", 1), Values: make([]types.Value, 3), Mask: []bool{true}}, "change 1 has a mask of 1 entries"},
	} {
		err := s.Commit("user_stats", []Change{good, bad.c})
		if err == nil || !strings.Contains(err.Error(), bad.want) || !errors.Is(err, ErrInvalid) {
			t.Errorf("Commit: %v, want %q", err, bad.want)
		}
	}
	r := read(t, s, "user_stats", [][]types.Value{key("ann", 1)})
	if r.Entries[0].Statuses[0] != NotFound || !r.Token.IsZero() && r.Token.seq != 0 {
		t.Errorf("a failed commit left %s, token %v", showResult(r), r.Token)
	}
	if err := s.Commit("nope", nil); err == nil {
		t.Error("a commit to an unknown group succeeded")
	}
}

func TestRedefine(t *testing.T) {
	s := open(t, Options{}, userStats())
	commit(t, s, "user_stats", set(key("ann", 1), 10, types.BigIntValue(3), types.DecimalValue(100, 2), types.StringValue("/a")))
	// bob's record stays in the first layout throughout.
	commit(t, s, "user_stats", set(key("bob", 1), 5, types.BigIntValue(1), types.DecimalValue(1, 2), types.StringValue("/b")))

	g := userStats()
	g.Version = 2
	// clicks kept (its nullability changed only), spend's type changed,
	// last_page dropped, sessions added, the order changed.
	g.Metrics = []Metric{
		{Name: "sessions", Type: types.BigInt},
		{Name: "spend", Type: types.Double},
		{Name: "clicks", Type: types.BigInt.WithNullable(false)},
	}
	if err := s.Define(g); err != nil {
		t.Fatal(err)
	}
	r := read(t, s, "user_stats", [][]types.Value{key("ann", 1)})
	if r.Version != 2 {
		t.Errorf("version %d", r.Version)
	}
	wantLines(t, showResult(r), []string{"ann,1: sessions=NOT_FOUND spend=NOT_FOUND clicks=3@10"})
	if _, err := s.Read("user_stats", nil, []string{"last_page"}); err == nil {
		t.Error("a dropped metric can still be read")
	}
	// A masked change over a record of the old layout keeps what the new
	// definition keeps.
	commit(t, s, "user_stats", Change{Key: key("ann", 1), Values: []types.Value{types.BigIntValue(1), {}, {}}, Mask: []bool{true, false, false}, EventTime: 20})
	wantLines(t, showResult(read(t, s, "user_stats", [][]types.Value{key("ann", 1)})), []string{"ann,1: sessions=1@20 spend=NOT_FOUND clicks=3@10"})

	// Back to the first definition: last_page and the DECIMAL spend were
	// dropped meanwhile and stay so; clicks is kept again.
	if err := s.Define(userStats()); err != nil {
		t.Fatal(err)
	}
	wantLines(t, showResult(read(t, s, "user_stats", [][]types.Value{key("ann", 1)})), []string{"ann,1: clicks=3@10 spend=NOT_FOUND last_page=NOT_FOUND"})
	// Nor has bob, whose record is of the first definition.
	wantLines(t, showResult(read(t, s, "user_stats", [][]types.Value{key("bob", 1)})), []string{"bob,1: clicks=1@5 spend=NOT_FOUND last_page=NOT_FOUND"})

	// New key columns drop every value.
	g = userStats()
	g.Keys = g.Keys[:1]
	if err := s.Define(g); err != nil {
		t.Fatal(err)
	}
	r = read(t, s, "user_stats", [][]types.Value{{types.StringValue("ann")}})
	wantLines(t, showResult(r), []string{"ann: clicks=NOT_FOUND spend=NOT_FOUND last_page=NOT_FOUND"})
	if st := s.Stats(); st.HotKeys != 0 {
		t.Errorf("%d keys left after the keys changed", st.HotKeys)
	}
}

func TestDefineErrors(t *testing.T) {
	s := open(t, Options{})
	for _, tc := range []struct {
		g    Group
		want string
	}{
		{Group{Metrics: []Metric{{Name: "m", Type: types.BigInt}}}, "needs a name"},
		{Group{Name: "g"}, "has no metric"},
		{Group{Name: "g", Keys: []types.Column{{Name: "k", Type: types.Int}}, Metrics: []Metric{{Name: "k", Type: types.BigInt}}}, "metric k has the name of a key column"},
		{Group{Name: "g", Metrics: []Metric{{Name: "m", Type: types.BigInt}, {Name: "m", Type: types.Int}}}, "metric m has the name of a metric"},
		{Group{Name: "g", Metrics: []Metric{{Name: "m", Type: types.Type{Kind: 200}}}}, "unknown type kind"},
	} {
		if err := s.Define(tc.g); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Define(%+v): %v, want %q", tc.g, err, tc.want)
		}
	}
	if len(s.Groups()) != 0 {
		t.Errorf("groups %v", s.Groups())
	}
}

func TestDropAndGroups(t *testing.T) {
	s := open(t, Options{}, userStats(), Group{Name: "a", Metrics: []Metric{{Name: "n", Type: types.BigInt}}})
	if gs := s.Groups(); len(gs) != 2 || gs[0].Name != "a" || gs[1].Name != "user_stats" {
		t.Fatalf("groups %+v", gs)
	}
	// A group without key columns holds one value per metric.
	commit(t, s, "a", set(nil, 5, types.BigIntValue(42)))
	wantLines(t, showResult(read(t, s, "a", [][]types.Value{{}})), []string{": n=42@5"})
	if err := s.Drop("b"); err == nil || !strings.Contains(err.Error(), `(did you mean "a"?)`) {
		t.Errorf("Drop(b): %v", err)
	}
	if err := s.Drop("a"); err != nil {
		t.Fatal(err)
	}
	var nf *NotFoundError
	if _, err := s.Read("a", nil, nil); !errors.As(err, &nf) {
		t.Errorf("read of a dropped group: %v", err)
	}
	if err := s.Define(Group{Name: "a", Metrics: []Metric{{Name: "n", Type: types.BigInt}}}); err != nil {
		t.Fatal(err)
	}
	wantLines(t, showResult(read(t, s, "a", [][]types.Value{{}})), []string{": n=NOT_FOUND"})
}

func TestResetAndReplace(t *testing.T) {
	s := open(t, Options{}, userStats())
	v := []types.Value{types.BigIntValue(1), types.DecimalValue(1, 0), types.StringValue("x")}
	commit(t, s, "user_stats", set(key("ann", 1), 1, v...), set(key("bob", 1), 1, v...))
	if err := s.Replace("user_stats", []Change{set(key("cid", 1), 2, v...)}); err != nil {
		t.Fatal(err)
	}
	keys := [][]types.Value{key("ann", 1), key("bob", 1), key("cid", 1)}
	wantLines(t, showResult(read(t, s, "user_stats", keys, "clicks")), []string{"ann,1: clicks=NOT_FOUND", "bob,1: clicks=NOT_FOUND", "cid,1: clicks=1@2"})
	if err := s.Reset("user_stats"); err != nil {
		t.Fatal(err)
	}
	wantLines(t, showResult(read(t, s, "user_stats", keys, "clicks")), []string{"ann,1: clicks=NOT_FOUND", "bob,1: clicks=NOT_FOUND", "cid,1: clicks=NOT_FOUND"})
	if st := s.Stats(); st.HotKeys != 0 || st.HotBytes != 0 {
		t.Errorf("after a reset: %+v", st)
	}
}

// Readers never see part of a commit: every commit sets all keys to
// one number, and every read of all keys finds one number.
func TestCommitAtomicForReaders(t *testing.T) {
	const keys = 200
	s := open(t, Options{}, Group{Name: "g", Keys: []types.Column{{Name: "k", Type: types.BigInt}},
		Metrics: []Metric{{Name: "a", Type: types.BigInt}, {Name: "b", Type: types.BigInt}}})
	all := make([][]types.Value, keys)
	for i := range all {
		all[i] = []types.Value{types.BigIntValue(int64(i))}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				r, err := s.Read("g", all, nil)
				if err != nil {
					errs <- err
					return
				}
				first := r.Entries[0]
				for i, e := range r.Entries {
					if e.Statuses[0] != first.Statuses[0] || e.Statuses[0] == Present &&
						(e.Values[0].Int() != first.Values[0].Int() || e.Values[1].Int() != first.Values[1].Int()) {
						errs <- fmt.Errorf("key %d reads %s, key 0 %s", i, show(e, r.Metrics), show(first, r.Metrics))
						return
					}
				}
			}
		}()
	}
	changes := make([]Change, keys)
	for n := int64(1); n <= 300; n++ {
		for i := range changes {
			changes[i] = set(all[i], n, types.BigIntValue(n), types.BigIntValue(-n))
			if n%7 == 0 {
				// The first metric only: the second keeps its value.
				changes[i].Mask = []bool{true, false}
			}
		}
		if err := s.Commit("g", changes); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// Records with one event time and with several, and a group of more
// metrics than the one-time form takes.
func TestManyMetricsAndTimes(t *testing.T) {
	for _, n := range []int{1, 63, 64, 70} {
		g := Group{Name: "g", Keys: []types.Column{{Name: "k", Type: types.BigInt}}}
		for i := range n {
			g.Metrics = append(g.Metrics, Metric{Name: fmt.Sprint("m", i), Type: types.BigInt})
		}
		s := open(t, Options{}, g)
		k := []types.Value{types.BigIntValue(1)}
		vals := make([]types.Value, n)
		for i := range vals {
			vals[i] = types.BigIntValue(int64(i))
		}
		vals[n-1] = types.Value{}
		commit(t, s, "g", set(k, 100, vals...))
		mask := make([]bool, n)
		mask[n/2] = true
		commit(t, s, "g", Change{Key: k, Values: vals, Mask: mask, EventTime: 200})
		last := make([]bool, n)
		last[n-1] = true
		commit(t, s, "g", Change{Key: []types.Value{types.BigIntValue(2)}, Values: vals, Mask: last, EventTime: 300})
		r := read(t, s, "g", [][]types.Value{k, {types.BigIntValue(2)}})
		for i := range n {
			st, at := Present, int64(100)
			if i == n/2 {
				at = 200
			}
			if i == n-1 {
				st = NullValue
			}
			e := r.Entries[0]
			if e.Statuses[i] != st || e.EventTimes[i] != at || st == Present && e.Values[i].Int() != int64(i) {
				t.Errorf("%d metrics: key 1 metric %d: %s", n, i, show(e, r.Metrics))
				break
			}
			e = r.Entries[1]
			if want := i == n-1; (e.Statuses[i] != NotFound) != want || want && (e.Statuses[i] != NullValue || e.EventTimes[i] != 300) {
				t.Errorf("%d metrics: key 2 metric %d: %s", n, i, show(e, r.Metrics))
				break
			}
		}
	}
}
