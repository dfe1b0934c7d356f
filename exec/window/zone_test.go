package window

import (
	"testing"
	"time"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/exec/agg"
	"github.com/sluicesql/sluice/types"
)

func losAngeles(t *testing.T) *time.Location {
	t.Helper()
	la, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		t.Skip("no tzdata:", err)
	}
	return la
}

// TestZoneConversions pins Zone against the examples of Flink's
// TimeWindowUtil (Los Angeles, 2021): wall-clock times of instants, the
// instants of wall-clock times (java.time's rules), and the instant a
// window's end is due (toEpochMillsForTimer) across the jump forward on
// 03-14 and the jump back on 11-07.
func TestZoneConversions(t *testing.T) {
	z := NewZone(losAngeles(t))
	for _, tc := range []struct{ instant, local string }{
		{"2021-03-14 09:59:59.999", "2021-03-14 01:59:59.999"},
		{"2021-03-14 10:00", "2021-03-14 03:00"},
		{"2021-11-07 08:30", "2021-11-07 01:30"}, // the first pass, PDT
		{"2021-11-07 09:30", "2021-11-07 01:30"}, // the second, PST
		{"2021-11-07 10:00", "2021-11-07 02:00"},
	} {
		if got := z.Local(ts(t, tc.instant)); got != ts(t, tc.local) {
			t.Errorf("Local(%sZ) = %s, want %s", tc.instant, fmtTS(got), tc.local)
		}
	}
	for _, tc := range []struct{ end, due string }{
		// A window ending at 01:00 is due at 00:59:59.999 PST.
		{"2021-03-14 01:00", "2021-03-14 08:59:59.999"},
		// One ending in the skipped hour, or at its end, is due when
		// the clocks jump: 10:00Z.
		{"2021-03-14 02:30", "2021-03-14 10:00"},
		{"2021-03-14 03:00", "2021-03-14 10:00"},
		{"2021-03-14 04:00", "2021-03-14 10:59:59.999"},
		// One ending at 02:00 on 11-07 is due at the second 01:59:59.999.
		{"2021-11-07 02:00", "2021-11-07 09:59:59.999"},
		{"2021-11-07 01:00", "2021-11-07 07:59:59.999"},
	} {
		if got := z.Last(ts(t, tc.end)); got != ts(t, tc.due) {
			t.Errorf("Last(%s) = %sZ, want %sZ", tc.end, fmtTS(got), tc.due)
		}
	}
	if got := z.Instant(ts(t, "2021-11-07 01:59:59.999")); got != ts(t, "2021-11-07 08:59:59.999") {
		t.Errorf("Instant(2021-11-07 01:59:59.999) = %sZ, want the earlier offset's 08:59:59.999Z", fmtTS(got))
	}
	var utc *Zone
	if utc.Local(5) != 5 || utc.Instant(5) != 5 || utc.Last(5*ms) != 4*ms || NewZone(time.UTC) != nil {
		t.Errorf("the UTC zone converts")
	}
	if z.Last(exec.MaxWatermark) != exec.MaxWatermark-maxTimestampGap || z.Local(exec.MaxWatermark) != exec.MaxWatermark {
		t.Errorf("the watermark markers are converted")
	}
}

// TestZoneRepeatedHour: an hourly TUMBLE in Los Angeles over the hour the
// clocks go through twice (01:00-02:00 on 2021-11-07) holds both passes,
// and fires only once the watermark passes the second: a watermark after
// the first pass is not the window's end.
func TestZoneRepeatedHour(t *testing.T) {
	la := losAngeles(t)
	h := newAgg(t, AggregateConfig{ID: "w", Spec: Spec{Kind: Tumble, Size: 60 * mnt, LTZ: true}, TimeCol: 0,
		Calls: []agg.Call{call(t, "COUNT", nil)}, Zone: la})
	row := func(at string) []types.Value { return []types.Value{types.TimestampLTZValue(ts(t, at))} }
	h.send(row("2021-11-07 08:30")) // 01:30 PDT
	h.watermark(ts(t, "2021-11-07 09:00"))
	h.expect("WM 2021-11-07 09:00")
	h.send(row("2021-11-07 09:30")) // 01:30 PST: the same window
	h.watermark(ts(t, "2021-11-07 09:59:59.999"))
	// window_start and window_end are wall-clock times; window_time is
	// the instant of 01:59:59.999 with the earlier offset (java.time).
	h.expect("+I[2021-11-07 01:00, 2021-11-07 02:00, 2021-11-07 08:59:59.999, 2]", "WM 2021-11-07 09:59:59.999")
	if n := h.metrics.LateRows.Load(); n != 0 {
		t.Errorf("%d late rows", n)
	}
}

// TestZoneDayOfDST: a day-long TUMBLE in Los Angeles on 2021-03-14 holds
// 23 hours of instants: a row at 06:59Z on 03-15 (23:59 PDT) is still in
// it, and the window fires at 07:00Z less 1 ms.
func TestZoneDayOfDST(t *testing.T) {
	h := newAgg(t, AggregateConfig{ID: "w", Spec: Spec{Kind: Tumble, Size: 24 * 60 * mnt, LTZ: true}, TimeCol: 0,
		Calls: []agg.Call{call(t, "COUNT", nil)}, Zone: losAngeles(t)})
	row := func(at string) []types.Value { return []types.Value{types.TimestampLTZValue(ts(t, at))} }
	h.send(row("2021-03-14 08:00"), row("2021-03-15 06:59"))
	h.watermark(ts(t, "2021-03-15 06:59:59.998"))
	h.expect("WM 2021-03-15 06:59:59.998")
	h.watermark(ts(t, "2021-03-15 06:59:59.999"))
	h.expect("+I[2021-03-14 00:00, 2021-03-15 00:00, 2021-03-15 06:59:59.999, 2]", "WM 2021-03-15 06:59:59.999")
}
