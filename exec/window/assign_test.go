package window

import (
	"strings"
	"testing"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/types"
)

func TestAssignKeepsLateRowsAndOrigins(t *testing.T) {
	h := newAssign(t, AssignConfig{Spec: Spec{Kind: Tumble, Size: 10 * sec}, TimeCol: 0})
	h.watermark(30 * sec)
	h.sendAt(3, 7, r(1*sec, "a", 1)) // late, but the TVF alone drops nothing
	h.expect(
		"WM 1970-01-01 00:00:30",
		"+I[1970-01-01 00:00:01, a, 1, 1970-01-01 00:00, 1970-01-01 00:00:10, 1970-01-01 00:00:09.999]",
	)
	if got := h.rec.rows[0].Origin; got != (types.Origin{Part: 3, Offset: 7}) {
		t.Errorf("TUMBLE origin %+v, want the input's", got)
	}
	if n := h.metrics.LateRows.Load(); n != 0 {
		t.Errorf("late rows %d", n)
	}
	h.finish()

	h = newAssign(t, AssignConfig{Spec: Spec{Kind: Hop, Size: 10 * sec, Slide: 5 * sec}, TimeCol: 0})
	b := types.NewBatch(1, 3)
	b.Append(types.Row{Kind: types.Delete, Origin: types.Origin{Part: 3, Offset: 7}, Vals: r(1*sec, "a", 1)})
	if err := h.op.Process(b); err != nil {
		t.Fatal(err)
	}
	h.expect(
		"-D[1970-01-01 00:00:01, a, 1, 1969-12-31 23:59:55, 1970-01-01 00:00:05, 1970-01-01 00:00:04.999]",
		"-D[1970-01-01 00:00:01, a, 1, 1970-01-01 00:00, 1970-01-01 00:00:10, 1970-01-01 00:00:09.999]",
	)
	for _, row := range h.rec.rows {
		if row.Origin != types.NoOrigin {
			t.Errorf("HOP copy origin %+v, want none", row.Origin)
		}
	}
	h.finish()
}

func TestSessionAssign(t *testing.T) {
	h := newAssign(t, AssignConfig{Spec: Spec{Kind: Session, Gap: 5 * sec}, TimeCol: 0, PartitionKeys: []int{1}, ID: "sess"})
	h.send(r(10*sec, "a", 1), r(1*sec, "b", 2), r(12*sec, "a", 3))
	h.sendAt(0, 3, r(12*sec, "a", 3)) // a replay of the third row
	h.watermark(15 * sec)
	h.expect(
		"+I[1970-01-01 00:00:01, b, 2, 1970-01-01 00:00:01, 1970-01-01 00:00:06, 1970-01-01 00:00:05.999]",
		"WM 1970-01-01 00:00:15",
	)
	h.send(r(2*sec, "b", 4))       // late: dropped
	h.send(r(11*sec+1*ms, "a", 5)) // joins a's session
	// Bridges nothing but extends a's session to 20 s.
	h.send(r(15*sec, "a", 6))
	h.watermark(exec.MaxWatermark)
	h.expect(
		"+I[1970-01-01 00:00:10, a, 1, 1970-01-01 00:00:10, 1970-01-01 00:00:20, 1970-01-01 00:00:19.999]",
		"+I[1970-01-01 00:00:12, a, 3, 1970-01-01 00:00:10, 1970-01-01 00:00:20, 1970-01-01 00:00:19.999]",
		"+I[1970-01-01 00:00:11.001, a, 5, 1970-01-01 00:00:10, 1970-01-01 00:00:20, 1970-01-01 00:00:19.999]",
		"+I[1970-01-01 00:00:15, a, 6, 1970-01-01 00:00:10, 1970-01-01 00:00:20, 1970-01-01 00:00:19.999]",
		"WM MAX",
	)
	if n := h.metrics.LateRows.Load(); n != 1 {
		t.Errorf("late rows %d, want 1", n)
	}
	if n := h.metrics.ReplayRows.Load(); n != 1 {
		t.Errorf("replays %d, want 1", n)
	}
	for _, row := range h.rec.rows {
		if row.Origin != types.NoOrigin {
			t.Errorf("SESSION row origin %+v, want none", row.Origin)
		}
	}
	h.finish()
}

func TestSessionAssignMergeKeepsArrivalOrder(t *testing.T) {
	h := newAssign(t, AssignConfig{Spec: Spec{Kind: Session, Gap: 10 * sec}, TimeCol: 0})
	h.send(r(0, "a", 1), r(15*sec, "b", 2), r(30*sec, "c", 3), r(8*sec, "d", 4), r(22*sec, "e", 5))
	h.finish()
	var got []string
	for _, row := range h.rec.rows {
		got = append(got, fmtValue(row.Vals[1])+" "+fmtValue(row.Vals[3])+" "+fmtValue(row.Vals[4]))
	}
	want := "a 1970-01-01 00:00 1970-01-01 00:00:40|b 1970-01-01 00:00 1970-01-01 00:00:40|" +
		"c 1970-01-01 00:00 1970-01-01 00:00:40|d 1970-01-01 00:00 1970-01-01 00:00:40|" +
		"e 1970-01-01 00:00 1970-01-01 00:00:40"
	if g := strings.Join(got, "|"); g != want {
		t.Fatalf("got  %s\nwant %s", g, want)
	}
}

func TestAssignErrors(t *testing.T) {
	next := &recorder{}
	for _, tt := range []struct {
		cfg AssignConfig
		err string
	}{
		{AssignConfig{Spec: Spec{Kind: Hop, Size: 10 * sec, Slide: 3 * sec}, Next: next}, "integral multiple"},
		{AssignConfig{Spec: Spec{Kind: Tumble, Size: sec}}, "no downstream operator"},
		{AssignConfig{Spec: Spec{Kind: Tumble, Size: sec}, TimeCol: -1, Next: next}, "negative time column"},
		{AssignConfig{Spec: Spec{Kind: Tumble, Size: sec}, PartitionKeys: []int{1}, Next: next}, "take no partition keys"},
		{AssignConfig{Spec: Spec{Kind: Session, Gap: sec}, PartitionKeys: []int{-1}, Next: next}, "negative partition column"},
	} {
		_, err := NewAssign(tt.cfg)
		if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("got %v, want %q", err, tt.err)
		}
	}
	h := newAssign(t, AssignConfig{Spec: Spec{Kind: Session, Gap: sec}, TimeCol: 0, PartitionKeys: []int{1}})
	b := types.NewBatch(1, 3)
	b.Append(types.Row{Kind: types.UpdateBefore, Origin: types.NoOrigin, Vals: r(0, "a", 1)})
	if err := h.op.Process(b); err == nil || !strings.Contains(err.Error(), "-U") {
		t.Errorf("retraction: got %v", err)
	}
	if err := h.sendErr([]types.Value{types.TimestampValue(0)}); err == nil || !strings.Contains(err.Error(), "cannot read column 1") {
		t.Errorf("narrow row: got %v", err)
	}
	if err := h.sendErr([]types.Value{{}, types.StringValue("a")}); err == nil || !strings.Contains(err.Error(), "NULL time") {
		t.Errorf("NULL time: got %v", err)
	}
}
