package rank

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/state"
	"github.com/sluicesql/sluice/types"
)

// cols are (p INT, v INT, s STRING).
var cols = []types.Type{types.Int, types.Int, types.String}

type collect struct {
	exec.Passthrough
	rows []string
}

func (c *collect) Open(*exec.Context) error { return nil }
func (c *collect) Process(b *types.Batch) error {
	for _, r := range b.Rows {
		c.rows = append(c.rows, r.Kind.String()+format(r.Vals))
	}
	return nil
}
func (c *collect) Watermark(int64) error { return nil }
func (c *collect) Finish() error         { return nil }
func (c *collect) Close() error          { return nil }

func format(vals []types.Value) string {
	var parts []string
	for i, v := range vals {
		t := types.BigInt
		if i < len(cols) {
			t = cols[i]
		}
		parts = append(parts, types.FormatValue(v, t))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// TestAgainstSorting feeds random rows (and, for an updating input,
// retractions of earlier ones) into a Top-N per partition ordered by v
// descending (NULLs last) then s, applies its changelog, and compares the
// result with sorting the final input: the same rows at the same numbers,
// up to rows that tie on every ORDER BY column; with ROW_NUMBER, RANK and
// DENSE_RANK, from the first number or (a third of the runs) from a later
// one (rn BETWEEN first AND n). Half of the runs
// checkpoint and go on in a restored operator.
func TestAgainstSorting(t *testing.T) {
	for seed := range uint64(72) {
		rng := rand.New(rand.NewPCG(seed, 5))
		n := 1 + rng.IntN(4)
		keepAll := seed%2 == 1
		noNumbers := seed%8 >= 4
		typ := Type(seed / 8 % 3)
		first := 1 // rn BETWEEN first AND n
		if seed%3 == 2 {
			first = 1 + rng.IntN(n)
		}
		t.Run(fmt.Sprintf("seed%d-%s-n%d-from%d-retract%v-numbers%v", seed, typ, n, first, keepAll, !noNumbers), func(t *testing.T) {
			st := state.NewMemory()
			open := func() (*Operator, *collect) {
				out := &collect{}
				o, err := New(Config{ID: "r", Partition: []int{0}, Limit: n, First: first, Types: cols, KeepAll: keepAll, NoNumbers: noNumbers, Type: typ,
					Order: []SortKey{{Col: 1, Desc: true, NullsFirst: false}, {Col: 2}}, Next: out})
				if err != nil {
					t.Fatal(err)
				}
				if err := o.Open(&exec.Context{State: st}); err != nil {
					t.Fatal(err)
				}
				return o, out
			}
			o, out := open()
			var live [][]types.Value
			var log []string
			for i := range 300 {
				if i == 150 && seed%4 < 2 {
					if err := o.Checkpoint(); err != nil {
						t.Fatal(err)
					}
					log = append(log, out.rows...)
					o, out = open()
				}
				b := types.NewBatch(1, 3)
				if keepAll && len(live) > 0 && rng.IntN(3) == 0 {
					j := rng.IntN(len(live))
					vals := b.AddRow(types.Delete, types.Origin{Part: 0, Offset: int64(i + 1)}, 3)
					copy(vals, live[j])
					live = append(live[:j], live[j+1:]...)
				} else {
					vals := b.AddRow(types.Insert, types.Origin{Part: 0, Offset: int64(i + 1)}, 3)
					vals[0] = types.IntValue(types.KindInt, int64(rng.IntN(3)))
					if rng.IntN(8) > 0 {
						vals[1] = types.IntValue(types.KindInt, int64(rng.IntN(10)))
					}
					vals[2] = types.StringValue(string(rune('a' + rng.IntN(3))))
					live = append(live, append([]types.Value(nil), vals...))
				}
				if err := o.Process(b); err != nil {
					t.Fatal(err)
				}
			}
			log = append(log, out.rows...)

			// Apply the changelog.
			got := map[string]int{}
			for _, r := range log {
				body := r[2:]
				if r[0] == '+' {
					got[body]++
				} else if got[body]--; got[body] < 0 {
					t.Fatalf("%s retracts a row not emitted\n%s", r, strings.Join(log, "\n"))
				}
			}
			// Sort the final input. Rows that tie on (v, s) are equal rows
			// here (p, v, s), so their order does not show.
			byPart := map[int64][][]types.Value{}
			for _, r := range live {
				byPart[r[0].Int()] = append(byPart[r[0].Int()], r)
			}
			want := map[string]int{}
			for _, rows := range byPart {
				sort.SliceStable(rows, func(i, j int) bool { return o.compare(rows[i], rows[j]) < 0 })
				num := 0
				for i, r := range rows {
					switch {
					case typ == RowNumber:
						num = i + 1
					case i > 0 && o.compare(r, rows[i-1]) == 0:
					case typ == Standard:
						num = i + 1
					default:
						num++
					}
					if num > n {
						break
					}
					if num < first {
						continue
					}
					shown := int64(num)
					if noNumbers {
						shown = 0
					}
					want[format(append(append([]types.Value(nil), r...), types.IntValue(types.KindBigInt, shown)))]++
				}
			}
			var diff []string
			for k, c := range want {
				if got[k] != c {
					diff = append(diff, fmt.Sprintf("%s: got %d, want %d", k, got[k], c))
				}
			}
			for k, c := range got {
				if _, ok := want[k]; !ok && c != 0 {
					diff = append(diff, fmt.Sprintf("%s: got %d, want 0", k, c))
				}
			}
			sort.Strings(diff)
			if len(diff) > 0 {
				t.Fatalf("the applied changelog differs from sorting:\n%s", strings.Join(diff, "\n"))
			}
		})
	}
}

// TestSequence pins a Top-2's exact changelog.
func TestSequence(t *testing.T) {
	out := &collect{}
	o, err := New(Config{Partition: []int{0}, Limit: 2, Types: cols, KeepAll: true,
		Order: []SortKey{{Col: 1, Desc: true}}, Next: out})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Open(&exec.Context{}); err != nil {
		t.Fatal(err)
	}
	feed := func(kind types.RowKind, v int64, s string) {
		b := types.NewBatch(1, 3)
		vals := b.AddRow(kind, types.Origin{Part: -1}, 3)
		vals[0], vals[1], vals[2] = types.IntValue(types.KindInt, 1), types.IntValue(types.KindInt, v), types.StringValue(s)
		if err := o.Process(b); err != nil {
			t.Fatal(err)
		}
	}
	feed(types.Insert, 5, "a") // +I a@1
	feed(types.Insert, 7, "b") // b goes first: a moves to 2
	feed(types.Insert, 6, "c") // c at 2: a leaves
	feed(types.Delete, 7, "b") // b leaves: c moves up, a comes back at 2
	want := "+I[1, 5, a, 1] -U[1, 5, a, 1] +U[1, 5, a, 2] +I[1, 7, b, 1] -D[1, 5, a, 2] +I[1, 6, c, 2] " +
		"-D[1, 7, b, 1] -U[1, 6, c, 2] +U[1, 6, c, 1] +I[1, 5, a, 2]"
	if got := strings.Join(out.rows, " "); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// TestSequenceRank pins a RANK Top-2's changelog: rows that tie share a
// number, and both leave together.
func TestSequenceRank(t *testing.T) {
	out := &collect{}
	o, err := New(Config{Partition: []int{0}, Limit: 2, Types: cols, KeepAll: true, Type: Standard,
		Order: []SortKey{{Col: 1, Desc: true}}, Next: out})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Open(&exec.Context{}); err != nil {
		t.Fatal(err)
	}
	feed := func(kind types.RowKind, v int64, s string) {
		b := types.NewBatch(1, 3)
		vals := b.AddRow(kind, types.Origin{Part: -1}, 3)
		vals[0], vals[1], vals[2] = types.IntValue(types.KindInt, 1), types.IntValue(types.KindInt, v), types.StringValue(s)
		if err := o.Process(b); err != nil {
			t.Fatal(err)
		}
	}
	feed(types.Insert, 5, "a") // a@1
	feed(types.Insert, 5, "b") // a tie: b@1
	feed(types.Insert, 7, "c") // c@1: a and b move to 2
	feed(types.Insert, 6, "d") // d@2: a and b would be 3, they leave
	feed(types.Delete, 7, "c") // d moves up; a and b come back at 2
	want := "+I[1, 5, a, 1] +I[1, 5, b, 1] " +
		"+I[1, 7, c, 1] -U[1, 5, a, 1] +U[1, 5, a, 2] -U[1, 5, b, 1] +U[1, 5, b, 2] " +
		"+I[1, 6, d, 2] -D[1, 5, a, 2] -D[1, 5, b, 2] " +
		"-D[1, 7, c, 1] -U[1, 6, d, 2] +U[1, 6, d, 1] +I[1, 5, a, 2] +I[1, 5, b, 2]"
	if got := strings.Join(out.rows, " "); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// TestSequenceFirst pins the changelog of rn BETWEEN 2 AND 3: a row that
// moves past the first number enters, one pushed below it leaves.
func TestSequenceFirst(t *testing.T) {
	for _, noNumbers := range []bool{false, true} {
		out := &collect{}
		o, err := New(Config{Partition: []int{0}, Limit: 3, First: 2, Types: cols, KeepAll: true, NoNumbers: noNumbers,
			Order: []SortKey{{Col: 1, Desc: true}}, Next: out})
		if err != nil {
			t.Fatal(err)
		}
		if err := o.Open(&exec.Context{}); err != nil {
			t.Fatal(err)
		}
		feed := func(kind types.RowKind, v int64, s string) {
			b := types.NewBatch(1, 3)
			vals := b.AddRow(kind, types.Origin{Part: -1}, 3)
			vals[0], vals[1], vals[2] = types.IntValue(types.KindInt, 1), types.IntValue(types.KindInt, v), types.StringValue(s)
			if err := o.Process(b); err != nil {
				t.Fatal(err)
			}
		}
		feed(types.Insert, 5, "a") // a@1: not shown
		feed(types.Insert, 7, "b") // b@1, a@2: a enters
		feed(types.Insert, 6, "c") // c@2, a@3: a moves
		feed(types.Insert, 8, "d") // d@1, b@2 enters, c@3, a leaves
		feed(types.Delete, 8, "d") // b@1 leaves, c@2, a@3 comes back
		want := "+I[1, 5, a, 2] -U[1, 5, a, 2] +U[1, 5, a, 3] +I[1, 6, c, 2] " +
			"-D[1, 5, a, 3] -U[1, 6, c, 2] +U[1, 6, c, 3] +I[1, 7, b, 2] " +
			"-D[1, 7, b, 2] -U[1, 6, c, 3] +U[1, 6, c, 2] +I[1, 5, a, 3]"
		if noNumbers {
			want = "+I[1, 5, a, 0] +I[1, 6, c, 0] -D[1, 5, a, 0] +I[1, 7, b, 0] -D[1, 7, b, 0] +I[1, 5, a, 0]"
		}
		if got := strings.Join(out.rows, " "); got != want {
			t.Errorf("numbers %v:\ngot  %s\nwant %s", !noNumbers, got, want)
		}
	}
}
