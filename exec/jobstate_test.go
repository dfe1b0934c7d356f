package exec

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/state"
	"github.com/sluicesql/sluice/state/lsm"
)

// namedSource is a source of named partitions whose versions the test
// sets.
type namedSource struct {
	names    []string
	versions map[string]string
}

func (s *namedSource) Partitions() int { return len(s.names) }
func (s *namedSource) Bounded() bool   { return true }
func (s *namedSource) Open(context.Context, int) (connector.Reader, error) {
	panic("not read")
}
func (s *namedSource) PartitionName(p int) string { return s.names[p] }
func (s *namedSource) PartitionVersion(p int) ([]byte, error) {
	return []byte(s.versions[s.names[p]]), nil
}
func (s *namedSource) SameVersion(p int, v []byte) bool { return string(v) == s.versions[s.names[p]] }

// Partitions keep their origin numbers by name across runs; a partition
// added gets a new one, never one given before; a rewritten one gets a
// new one and its position is forgotten, as is a removed one's.
func TestOriginsByName(t *testing.T) {
	src := &namedSource{names: []string{"b"}, versions: map[string]string{"a": "1", "b": "1", "c": "1"}}
	g := &Graph{Stages: []*Stage{{Name: "t", ID: "job/source-x", Source: src}}}
	st := state.NewMemory()
	opts := RunOptions{Job: "job", State: st}
	origins := func() map[string]partition {
		t.Helper()
		ps, err := g.partitions(opts)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]partition{}
		for i, p := range ps[g.Stages[0]] {
			out[src.names[i]] = p
		}
		return out
	}
	first := origins()["b"]
	if first.key != "job/source-x/b" || !first.fresh {
		t.Fatalf("first run: %+v", first)
	}
	st.Commit("job", map[string]int64{"job/source-x/b": 10})

	src.names = []string{"a", "b"} // a sorts first
	o := origins()
	if o["b"].origin != first.origin || o["b"].fresh || o["a"].origin == first.origin || !o["a"].fresh {
		t.Fatalf("a file added before b moved it: %+v", o)
	}
	st.Commit("job", map[string]int64{"job/source-x/a": 3, "job/source-x/b": 10})

	src.versions["b"] = "2" // rewritten
	o2 := origins()
	if !o2["b"].fresh || o2["b"].origin == o["b"].origin || o2["b"].origin == o["a"].origin {
		t.Fatalf("a rewritten file kept its number: %+v then %+v", o, o2)
	}
	st.Commit("job", map[string]int64{"job/source-x/a": 3})
	if pos, _ := st.Positions("job"); len(pos) != 1 || pos["job/source-x/a"] != 3 {
		t.Fatalf("the rewritten file's position was not forgotten: %v", pos)
	}

	src.names = []string{"b", "c"} // a archived
	o3 := origins()
	st.Commit("job", nil)
	if pos, _ := st.Positions("job"); len(pos) != 0 {
		t.Fatalf("the archived file's position was not forgotten: %v", pos)
	}
	for _, n := range []string{"b", "c"} {
		for _, old := range []int32{first.origin, o["a"].origin} {
			if o3[n].origin == old && n == "c" {
				t.Fatalf("a number was given twice: %+v", o3)
			}
		}
	}
	if o3["b"].origin != o2["b"].origin || o3["b"].fresh {
		t.Fatalf("b moved: %+v then %+v", o2, o3)
	}
}

// A job over a state whose manifest differs is refused; with
// AllowStateLoss it starts, and only what the entries it lost kept (their
// stores under their IDs, a stateful sink's store named by its ID, a
// source's positions) is dropped: an entry whose ID extends a lost one's
// ("-2") keeps its state, and the new manifest is saved.
func TestClaimStateAllowLoss(t *testing.T) {
	t.Run("memory", func(t *testing.T) { testClaimStateAllowLoss(t, state.NewMemory()) })
	t.Run("lsm", func(t *testing.T) {
		b, err := lsm.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		testClaimStateAllowLoss(t, b)
	})
}

func testClaimStateAllowLoss(t *testing.T, st state.Backend) {
	put := func(store, k string) {
		t.Helper()
		s, err := st.Store(store)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Put([]byte(k), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	has := func(store, k string) bool {
		s, _ := st.Store(store)
		_, ok, _ := s.Get([]byte(k))
		return ok
	}
	old := state.Manifest{Entries: []state.ManifestEntry{
		{ID: "job/source-1", Label: "source t", What: "filesystem /t"},
		{ID: "job/source-2", Label: "source u", What: "filesystem /u"},
		{ID: "job/agg-a", Label: "GroupAggregate", What: "GroupAggregate(groupBy=[k], select=[COUNT(*)])"},
		{ID: "job/agg-a-2", Label: "GroupAggregate", What: "GroupAggregate(groupBy=[k], select=[COUNT(*)])"},
		{ID: "job/sink-s", Label: "sink out", What: "filesystem /out"},
	}}
	if err := state.SaveManifest(st, "job", old); err != nil {
		t.Fatal(err)
	}
	put("job/agg-a/0", "k")
	put("job/agg-a-2/0", "k")
	put("job/sink-s", "snapshot")
	put("job/sink-s-2", "snapshot")
	st.Commit("job", map[string]int64{"job/source-1/f": 5, "job/source-2/g": 7})

	g := &Graph{Manifest: state.Manifest{Entries: []state.ManifestEntry{
		{ID: "job/source-1", Label: "source t", What: "filesystem /t"},
		{ID: "job/agg-a-2", Label: "GroupAggregate", What: "GroupAggregate(groupBy=[k], select=[COUNT(*)])"},
		{ID: "job/agg-b", Label: "Rank", What: "Rank(...)"},
	}}}
	var me *state.MismatchError
	if err := g.claimState(RunOptions{Job: "job", State: st}); !errors.As(err, &me) {
		t.Fatalf("a changed job over the state: %v, want a MismatchError", err)
	}
	var log []string
	logf := func(format string, args ...any) { log = append(log, fmt.Sprintf(format, args...)) }
	if err := g.claimState(RunOptions{Job: "job", State: st, AllowStateLoss: true, Logf: logf}); err != nil {
		t.Fatal(err)
	}
	if has("job/agg-a/0", "k") || has("job/sink-s", "snapshot") {
		t.Error("the state of the entries dropped is still there")
	}
	if !has("job/agg-a-2/0", "k") || !has("job/sink-s-2", "snapshot") {
		t.Error("state not lost was dropped")
	}
	if err := st.Commit("job", nil); err != nil { // the drops are durable with it
		t.Fatal(err)
	}
	pos, _ := st.Positions("job")
	if _, ok := pos["job/source-2/g"]; ok || pos["job/source-1/f"] != 5 {
		t.Errorf("positions: %v, want those of source-1 only", pos)
	}
	m, _, _ := state.LoadManifest(st, "job")
	if len(m.Diff(g.Manifest)) != 0 {
		t.Errorf("the saved manifest is not the job's: %v", m.Diff(g.Manifest))
	}
	want := []string{
		"job job: Rank (job/agg-b) has no saved state: new: it starts from zero",
		"job job: 'state.allow-loss': dropped the state of source u (job/source-2): no longer in the job: its state is dropped",
		"job job: 'state.allow-loss': dropped the state of GroupAggregate (job/agg-a): no longer in the job: its state is dropped",
		"job job: 'state.allow-loss': dropped the state of sink out (job/sink-s): no longer in the job: its state is dropped",
	}
	if !slices.Equal(log, want) {
		t.Errorf("log:\n%s\nwant:\n%s", strings.Join(log, "\n"), strings.Join(want, "\n"))
	}
}
