package types

import (
	"testing"
	"time"
)

func TestCivil(t *testing.T) {
	tests := []struct {
		y, m, d int
		days    int64
	}{
		{1970, 1, 1, 0},
		{1969, 12, 31, -1},
		{2000, 2, 29, 11016},
		{2020, 4, 15, 18367},
		{1900, 3, 1, -25508},
		{1, 1, 1, -719162},
	}
	for _, tc := range tests {
		if got := DateFromCivil(tc.y, tc.m, tc.d); got != tc.days {
			t.Errorf("DateFromCivil(%d-%d-%d) = %d, want %d", tc.y, tc.m, tc.d, got, tc.days)
		}
		y, m, d := CivilFromDate(tc.days)
		if y != tc.y || m != tc.m || d != tc.d {
			t.Errorf("CivilFromDate(%d) = %d-%d-%d", tc.days, y, m, d)
		}
	}
	// Cross-check a range against the time package.
	for days := int64(-800000); days < 800000; days += 997 {
		y, m, d := CivilFromDate(days)
		tm := time.Unix(days*86400, 0).UTC()
		if tm.Year() != y || int(tm.Month()) != m || tm.Day() != d {
			t.Fatalf("CivilFromDate(%d) = %d-%d-%d, time says %s", days, y, m, d, tm)
		}
	}
}

func TestParseDate(t *testing.T) {
	tests := []struct {
		in   string
		want int64
	}{
		{"2020-04-15", 18367},
		{" 2020-4-5 ", 18357},
		{"1970-01-01", 0},
		{"2000-02-29", 11016},
	}
	for _, tc := range tests {
		got, err := ParseDate(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseDate(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "2020", "2020-13-01", "2021-02-29", "2020-04-31", "2020-04-15x", "2020/04/15", "2020-04-15 08:00:00"} {
		if _, err := ParseDate(bad); err == nil {
			t.Errorf("ParseDate(%q): want error", bad)
		}
	}
}

func TestParseTime(t *testing.T) {
	tests := []struct {
		in   string
		want int64
	}{
		{"08:05", 8*MicrosPerHour + 5*MicrosPerMinute},
		{"08:05:07", 8*MicrosPerHour + 5*MicrosPerMinute + 7*MicrosPerSecond},
		{"23:59:59.999", 86399999000},
		{"00:00:00.123456789", 123456},
		{"0:0:1", MicrosPerSecond},
	}
	for _, tc := range tests {
		got, err := ParseTime(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseTime(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "24:00:00", "12:60", "12:00:60", "12", "12:00:00.", "12:00:00.1234567890"} {
		if _, err := ParseTime(bad); err == nil {
			t.Errorf("ParseTime(%q): want error", bad)
		}
	}
}

func TestParseTimestamp(t *testing.T) {
	base := int64(18367) * MicrosPerDay // 2020-04-15
	hm := 8*MicrosPerHour + 5*MicrosPerMinute
	tests := []struct {
		in   string
		want int64
	}{
		{"2020-04-15 08:05:00", base + hm},
		{"2020-04-15 08:05", base + hm},
		{"2020-04-15", base},
		{"2020-04-15 08:05:00.123", base + hm + 123000},
		{"2020-04-15 08:05:00.123456789", base + hm + 123456},
		{"2020-04-15T08:05:00", base + hm},
		{"2020-04-15T08:05:00.5Z", base + hm + 500000},
		{"2020-04-15T08:05:00+01:00", base + hm - MicrosPerHour},
		{"2020-04-15T08:05:00-0230", base + hm + 2*MicrosPerHour + 30*MicrosPerMinute},
		{"2020-04-15T08:05:00+05", base + hm - 5*MicrosPerHour},
		{"1969-12-31 23:59:59.999", -1000},
	}
	for _, tc := range tests {
		got, err := ParseTimestamp(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseTimestamp(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "2020-04-15T", "2020-04-15X08:05:00", "2020-04-15 08:05:00+1", "2020-04-15 8", "2020-04-15 08:05:00 UTC"} {
		if _, err := ParseTimestamp(bad); err == nil {
			t.Errorf("ParseTimestamp(%q): want error", bad)
		}
	}
}

func TestFormatTimes(t *testing.T) {
	ts := int64(18367)*MicrosPerDay + 8*MicrosPerHour + 5*MicrosPerMinute + 123456
	tests := []struct {
		got, want string
	}{
		{FormatDate(18367), "2020-04-15"},
		{FormatDate(-1), "1969-12-31"},
		{FormatDate(-719162), "0001-01-01"},
		{FormatTime(8*MicrosPerHour+5*MicrosPerMinute, 0), "08:05:00"},
		{FormatTime(123456, 3), "00:00:00.123"},
		{FormatTimestamp(ts, 0), "2020-04-15 08:05:00"},
		{FormatTimestamp(ts, 3), "2020-04-15 08:05:00.123"},
		{FormatTimestamp(ts, 6), "2020-04-15 08:05:00.123456"},
		{FormatTimestamp(ts, 9), "2020-04-15 08:05:00.123456000"},
		{FormatTimestamp(18367*MicrosPerDay, 3), "2020-04-15 00:00:00.000"},
		{FormatTimestamp(-1000, 3), "1969-12-31 23:59:59.999"},
		{FormatTimestampISO(ts, 3), "2020-04-15T08:05:00.123"},
		{FormatTimestampISOZ(ts, 3), "2020-04-15T08:05:00.123Z"},
		{FormatTimestampISOZ(ts, 0), "2020-04-15T08:05:00Z"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestTruncatePrecision(t *testing.T) {
	if got := TruncatePrecision(1234567, 3); got != 1234000 {
		t.Errorf("got %d", got)
	}
	if got := TruncatePrecision(-1, 0); got != -MicrosPerSecond {
		t.Errorf("got %d", got)
	}
	if got := TruncatePrecision(1234567, 9); got != 1234567 {
		t.Errorf("got %d", got)
	}
}

func TestZones(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no tzdata:", err)
	}
	// 2020-04-15 08:05:00 in Berlin (CEST, +02:00) is 06:05:00 UTC.
	wall, _ := ParseTimestamp("2020-04-15 08:05:00")
	inst := LocalToInstant(wall, berlin)
	if got := FormatTimestamp(inst, 0); got != "2020-04-15 06:05:00" {
		t.Errorf("LocalToInstant = %s", got)
	}
	if got := InstantToLocal(inst, berlin); got != wall {
		t.Errorf("InstantToLocal = %d, want %d", got, wall)
	}
	if got := ZoneOffset(inst, berlin); got != 2*MicrosPerHour {
		t.Errorf("ZoneOffset = %d", got)
	}
	if LocalToInstant(wall, nil) != wall || InstantToLocal(wall, time.UTC) != wall {
		t.Errorf("UTC conversion changed the value")
	}
}

// TestLocalToInstantTransitions: a wall-clock time in a daylight saving
// gap moves later by the length of the gap, and one in an overlap takes
// the earlier offset, as java.time's LocalDateTime.atZone does (Flink's
// TIMESTAMP to TIMESTAMP_LTZ and its window bounds), whichever side of
// UTC the zone is on.
func TestLocalToInstantTransitions(t *testing.T) {
	for _, tc := range []struct{ zone, wall, want string }{
		// Los Angeles skips 02:00-03:00 on 2021-03-14 (PST to PDT at 10:00Z).
		{"America/Los_Angeles", "2021-03-14 02:30:00", "2021-03-14 10:30:00"},
		{"America/Los_Angeles", "2021-03-14 02:00:00", "2021-03-14 10:00:00"},
		{"America/Los_Angeles", "2021-03-14 01:59:59.999", "2021-03-14 09:59:59.999"},
		{"America/Los_Angeles", "2021-03-14 03:00:00", "2021-03-14 10:00:00"},
		// and lives 01:00-02:00 twice on 2021-11-07 (PDT to PST at 09:00Z).
		{"America/Los_Angeles", "2021-11-07 01:30:00", "2021-11-07 08:30:00"},
		{"America/Los_Angeles", "2021-11-07 02:00:00", "2021-11-07 10:00:00"},
		{"America/Los_Angeles", "2021-11-07 00:59:59", "2021-11-07 07:59:59"},
		// Berlin skips 02:00-03:00 on 2021-03-28 and lives 02:00-03:00
		// twice on 2021-10-31.
		{"Europe/Berlin", "2021-03-28 02:30:00", "2021-03-28 01:30:00"},
		{"Europe/Berlin", "2021-10-31 02:30:00", "2021-10-31 00:30:00"},
		{"Asia/Shanghai", "2021-04-15 22:09:59.999", "2021-04-15 14:09:59.999"},
	} {
		loc, err := time.LoadLocation(tc.zone)
		if err != nil {
			t.Skip("no tzdata:", err)
		}
		wall, _ := ParseTimestamp(tc.wall)
		if got := FormatTimestamp(LocalToInstant(wall, loc), 3); got != tc.want && got != tc.want+".000" {
			t.Errorf("LocalToInstant(%s in %s) = %sZ, want %sZ", tc.wall, tc.zone, got, tc.want)
		}
	}
}

func TestParseTimestampNoAlloc(t *testing.T) {
	n := testing.AllocsPerRun(100, func() { _, _ = ParseTimestamp("2020-04-15T08:05:00.123Z") })
	if n != 0 {
		t.Errorf("ParseTimestamp allocates %v", n)
	}
	buf := make([]byte, 0, 64)
	n = testing.AllocsPerRun(100, func() { buf = AppendTimestamp(buf[:0], 1586937900123000, 3) })
	if n != 0 {
		t.Errorf("AppendTimestamp allocates %v", n)
	}
}

func BenchmarkParseTimestamp(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_, _ = ParseTimestamp("2020-04-15 08:05:00.123")
	}
}

func BenchmarkAppendTimestamp(b *testing.B) {
	b.ReportAllocs()
	buf := make([]byte, 0, 64)
	for b.Loop() {
		buf = AppendTimestamp(buf[:0], 1586937900123000, 3)
	}
}
