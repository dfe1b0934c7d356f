package window

import (
	"math"
	"time"

	"github.com/sluicesql/sluice/types"
)

// Zone aligns windows over TIMESTAMP_LTZ times in the session time zone,
// as Flink does with its "shift time zone" (TimeWindowUtil): a row's
// instant is read as the wall-clock time of the zone
// (Local), windows are cut in wall-clock time, window_start and window_end
// are those wall-clock times (TIMESTAMP), and a window fires when the
// watermark, an instant, reaches the instant its last millisecond ends at
// (Fired). So a day-long window is a day of the zone's calendar: 23 or 25
// hours of instants on the days daylight saving time starts or ends, and
// an hourly window over an hour the clocks go through twice holds both.
//
// A nil *Zone is UTC, where wall-clock times are instants: every method is
// the identity then. A Zone caches the zone period of the last instant it
// read; it belongs to one operator (one goroutine).
type Zone struct {
	loc *time.Location
	// lo and hi bound the zone period of the last instant read, whose
	// offset from UTC is off (microseconds).
	lo, hi, off int64
}

// NewZone returns the Zone of loc, or nil for UTC (or nil).
func NewZone(loc *time.Location) *Zone {
	if loc == nil || loc == time.UTC {
		return nil
	}
	return &Zone{loc: loc, lo: 1, hi: 0}
}

// saneTime bounds the times a Zone converts: beyond it lie the watermark
// markers (exec.MinWatermark, exec.MaxWatermark) and "nothing pending",
// which stay as they are, as in Flink.
const saneTime = 1 << 61

// Local returns the wall-clock time in z of instant t.
func (z *Zone) Local(t int64) int64 {
	if z == nil {
		return t
	}
	if t >= z.lo && t < z.hi {
		return t + z.off
	}
	return z.lookup(t)
}

// lookup reads the zone period of instant t into the cache and returns
// t's wall-clock time.
func (z *Zone) lookup(t int64) int64 {
	if t >= saneTime || t <= -saneTime {
		return t
	}
	at := time.UnixMicro(t).In(z.loc)
	_, off := at.Zone()
	z.off = int64(off) * types.MicrosPerSecond
	start, end := at.ZoneBounds()
	z.lo, z.hi = math.MinInt64, math.MaxInt64
	if !start.IsZero() {
		z.lo = start.UnixMicro()
	}
	if !end.IsZero() {
		z.hi = end.UnixMicro()
	}
	return t + z.off
}

// Instant returns the instant of wall-clock time local in z, as
// java.time's LocalDateTime.atZone: Flink's window_time of a window over
// TIMESTAMP_LTZ is the instant of its window_end - 1 ms read so.
func (z *Zone) Instant(local int64) int64 {
	if z == nil || local >= saneTime || local <= -saneTime {
		return local
	}
	return types.LocalToInstant(local, z.loc)
}

// Last returns the instant at which a window (or slice) ending at
// wall-clock time end has had all its rows: the instant of its last
// millisecond, end - 1 ms, or, as Flink's toEpochMillsForTimer chooses,
// the end of a gap it lies in (the clocks jumped past it) and the second
// of two instants it names (the clocks went through it twice).
func (z *Zone) Last(end int64) int64 {
	if z == nil {
		return end - maxTimestampGap
	}
	return z.last(end - maxTimestampGap)
}

func (z *Zone) last(last int64) int64 {
	if last >= saneTime || last <= -saneTime {
		return last
	}
	const hour = 3600 * types.MicrosPerSecond
	t1 := types.LocalToInstant(last, z.loc)
	t2 := types.LocalToInstant(last+hour, z.loc)
	switch {
	case t1 == t2:
		// In a gap: the instant the clocks jumped, on the hour.
		return t1 - types.FloorMod(t1, hour)
	case t2-t1 > hour:
		// Twice: the later instant, so that both passes are in.
		return t1 + hour
	}
	return t1
}

// Fired reports whether a window (or slice) ending at wall-clock time end
// has fired under watermark wm: Last(end) is at or before wm.
func (z *Zone) Fired(end, wm int64) bool { return z.Last(end) <= wm }

// specZone returns the Zone windows of spec are aligned in: loc's for a
// TIMESTAMP_LTZ time attribute, else nil (UTC).
func specZone(spec Spec, loc *time.Location) *Zone {
	if !spec.LTZ {
		return nil
	}
	return NewZone(loc)
}

// windowTime returns the window_time of a window ending at end:
// TIMESTAMP(3) end - 1 ms, or with ltz the TIMESTAMP_LTZ instant of that
// wall-clock time in z.
func windowTime(z *Zone, ltz bool, end int64) types.Value {
	if ltz {
		return types.TimestampLTZValue(z.Instant(end - maxTimestampGap))
	}
	return types.TimestampValue(end - maxTimestampGap)
}
