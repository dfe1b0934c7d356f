package state

import "testing"

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
