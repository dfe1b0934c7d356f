package state

import (
	"maps"
	"math/rand/v2"
	"testing"
)

func TestOffsetsAdmitAndEncoding(t *testing.T) {
	o := NewOffsets()
	for _, c := range []struct {
		part int32
		off  int64
		want bool
	}{
		{0, 5, true}, {0, 5, false}, {0, 4, false}, {0, 6, true},
		{1, 0, true}, {1, 0, false}, // offset 0 is an offset
		{-1, 3, true}, {-1, 3, true}, // no origin: never a replay
	} {
		if got := o.Admit(c.part, c.off); got != c.want {
			t.Errorf("Admit(%d, %d) = %v, want %v", c.part, c.off, got, c.want)
		}
	}
	r := NewOffsets()
	if err := r.LoadBinary(o.AppendBinary(nil)); err != nil {
		t.Fatal(err)
	}
	if a, b := o.All(), r.All(); len(a) != 2 || len(b) != 2 || a[0] != b[0] || a[1] != b[1] {
		t.Errorf("round trip: %v → %v", a, b)
	}
	if err := r.LoadBinary([]byte{5, 1}); err == nil {
		t.Error("a truncated table decoded")
	}
}

// TestOffsetsModel admits random rows from a few partitions, with Get,
// Set, All, AppendBinary and LoadBinary in between, and compares every
// answer with a plain map: the entry kept aside for the last partition
// must never show.
func TestOffsetsModel(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	o, m := NewOffsets(), map[int32]int64{}
	for i := range 20000 {
		p := int32(r.IntN(4))
		if r.IntN(4) > 0 && i > 0 {
			p = int32(i/100) % 4 // runs of one partition, as batches are
		}
		off := int64(r.IntN(1000))
		switch r.IntN(20) {
		case 0:
			o.Set(p, off)
			m[p] = off
		case 1:
			got, ok := o.Get(p)
			want, wok := m[p]
			if got != want || ok != wok {
				t.Fatalf("step %d: Get(%d) = %d %v, want %d %v", i, p, got, ok, want, wok)
			}
		case 2:
			if a := o.All(); !maps.Equal(a, m) {
				t.Fatalf("step %d: All() = %v, want %v", i, a, m)
			}
		case 3:
			n := NewOffsets()
			n.Admit(p, off) // an entry aside, replaced by the load
			if err := n.LoadBinary(o.AppendBinary(nil)); err != nil {
				t.Fatal(err)
			}
			if _, had := m[p]; had && !maps.Equal(n.All(), m) {
				t.Fatalf("step %d: round trip %v, want %v", i, n.All(), m)
			}
		default:
			last, seen := m[p]
			want := !seen || off > last
			if got := o.Admit(p, off); got != want {
				t.Fatalf("step %d: Admit(%d, %d) = %v, want %v", i, p, off, got, want)
			}
			if want {
				m[p] = off
			}
		}
	}
}
