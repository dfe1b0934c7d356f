package exec

import (
	"context"
	"testing"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/state"
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
