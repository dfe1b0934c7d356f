package sluice_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicesql/sluice"
)

// The rows of Flink's "Time Zone" page (docs/dev/table/timezone), section
// "Event Time Attribute on TIMESTAMP_LTZ": epoch milliseconds read as a
// TIMESTAMP_LTZ rowtime, 2021-04-15 14:01:00Z to 14:05:00Z, and 14:11:00Z.
const tzItems = `A,1.1,1618495260000
B,1.2,1618495320000
A,1.8,1618495380000
B,2.5,1618495440000
C,3.8,1618495500000
C,3.8,1618495860000
`

const tzTable = `
CREATE TABLE MyTable3 (
  item STRING,
  price DOUBLE,
  ts BIGINT,
  ts_ltz AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR ts_ltz AS ts_ltz - INTERVAL '10' SECOND
) WITH ('connector' = 'filesystem', 'path' = '$DIR/items.csv', 'format' = 'csv');
`

// tzRun runs src in zone (SET 'table.local-time-zone') over the page's
// rows and returns the printed rows, sorted, without the header.
func tzRun(t *testing.T, zone, rows, src string) []string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, dir, "items.csv", rows)
	out, err := runSQL(t, nil, dir, "SET 'table.local-time-zone' = '"+zone+"';\n"+src)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")[1:]
	slices.Sort(lines)
	return lines
}

func checkRows(t *testing.T, what string, got, want []string) {
	t.Helper()
	slices.Sort(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n%s\nwant\n%s", what, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestLegacyTumbleOverLTZ is the page's MyView5: a legacy TUMBLE over a
// TIMESTAMP_LTZ rowtime is aligned in the session time zone. In UTC the
// window is 14:00-14:10; in Asia/Shanghai it is 22:00-22:10 (TUMBLE_START
// and TUMBLE_END are TIMESTAMP(3) wall-clock times), and TUMBLE_ROWTIME is
// the same instant in both, 14:09:59.999Z, printed in the session zone.
// (The page shows the first window only; the bounded input's end fires
// the second, 14:10-14:20, too.)
func TestLegacyTumbleOverLTZ(t *testing.T) {
	q := tzTable + `
SELECT
  TUMBLE_START(ts_ltz, INTERVAL '10' MINUTES) AS window_start,
  TUMBLE_END(ts_ltz, INTERVAL '10' MINUTES) AS window_end,
  TUMBLE_ROWTIME(ts_ltz, INTERVAL '10' MINUTES) AS window_rowtime,
  item,
  MAX(price) AS max_price
FROM MyTable3
GROUP BY TUMBLE(ts_ltz, INTERVAL '10' MINUTES), item;
`
	checkRows(t, "UTC", tzRun(t, "UTC", tzItems, q), []string{
		"+I[2021-04-15 14:00:00.000, 2021-04-15 14:10:00.000, 2021-04-15 14:09:59.999, A, 1.8]",
		"+I[2021-04-15 14:00:00.000, 2021-04-15 14:10:00.000, 2021-04-15 14:09:59.999, B, 2.5]",
		"+I[2021-04-15 14:00:00.000, 2021-04-15 14:10:00.000, 2021-04-15 14:09:59.999, C, 3.8]",
		"+I[2021-04-15 14:10:00.000, 2021-04-15 14:20:00.000, 2021-04-15 14:19:59.999, C, 3.8]",
	})
	checkRows(t, "Asia/Shanghai", tzRun(t, "Asia/Shanghai", tzItems, q), []string{
		"+I[2021-04-15 22:00:00.000, 2021-04-15 22:10:00.000, 2021-04-15 22:09:59.999, A, 1.8]",
		"+I[2021-04-15 22:00:00.000, 2021-04-15 22:10:00.000, 2021-04-15 22:09:59.999, B, 2.5]",
		"+I[2021-04-15 22:00:00.000, 2021-04-15 22:10:00.000, 2021-04-15 22:09:59.999, C, 3.8]",
		"+I[2021-04-15 22:10:00.000, 2021-04-15 22:20:00.000, 2021-04-15 22:19:59.999, C, 3.8]",
	})
}

// TestWindowsOverLTZ: every window kind over a TIMESTAMP_LTZ rowtime, as
// TVF and (where there is one) legacy group window, is aligned in the
// session time zone: in Asia/Shanghai (+08:00) the page's rows fall in
// windows of Shanghai wall-clock time; window_time is a TIMESTAMP_LTZ
// rowtime, the instant window_end - 1 ms in that zone, printed there.
func TestWindowsOverLTZ(t *testing.T) {
	const zone = "Asia/Shanghai"
	for _, tc := range []struct {
		name, query string
		want        []string
	}{
		{"TUMBLE", `SELECT window_start, window_end, window_time, COUNT(*) AS n FROM TABLE(
  TUMBLE(TABLE MyTable3, DESCRIPTOR(ts_ltz), INTERVAL '1' HOUR)) GROUP BY window_start, window_end, window_time`,
			[]string{"+I[2021-04-15 22:00:00.000, 2021-04-15 23:00:00.000, 2021-04-15 22:59:59.999, 6]"}},
		{"HOP", `SELECT window_start, window_end, window_time, COUNT(*) AS n FROM TABLE(
  HOP(TABLE MyTable3, DESCRIPTOR(ts_ltz), INTERVAL '1' HOUR, INTERVAL '2' HOUR)) GROUP BY window_start, window_end, window_time`,
			[]string{
				"+I[2021-04-15 21:00:00.000, 2021-04-15 23:00:00.000, 2021-04-15 22:59:59.999, 6]",
				"+I[2021-04-15 22:00:00.000, 2021-04-16 00:00:00.000, 2021-04-15 23:59:59.999, 6]",
			}},
		{"CUMULATE", `SELECT window_start, window_end, window_time, COUNT(*) AS n FROM TABLE(
  CUMULATE(TABLE MyTable3, DESCRIPTOR(ts_ltz), INTERVAL '1' HOUR, INTERVAL '1' DAY)) GROUP BY window_start, window_end, window_time`,
			// The steps before 22:00 Shanghai time hold no row.
			[]string{
				"+I[2021-04-15 00:00:00.000, 2021-04-15 23:00:00.000, 2021-04-15 22:59:59.999, 6]",
				"+I[2021-04-15 00:00:00.000, 2021-04-16 00:00:00.000, 2021-04-15 23:59:59.999, 6]",
			}},
		{"SESSION", `SELECT window_start, window_end, window_time, COUNT(*) AS n FROM TABLE(
  SESSION(TABLE MyTable3, DESCRIPTOR(ts_ltz), INTERVAL '5' MINUTE)) GROUP BY window_start, window_end, window_time`,
			[]string{
				"+I[2021-04-15 22:01:00.000, 2021-04-15 22:10:00.000, 2021-04-15 22:09:59.999, 5]",
				"+I[2021-04-15 22:11:00.000, 2021-04-15 22:16:00.000, 2021-04-15 22:15:59.999, 1]",
			}},
		{"TVF rows", `SELECT item, window_start, window_end, window_time FROM TABLE(
  TUMBLE(TABLE MyTable3, DESCRIPTOR(ts_ltz), INTERVAL '1' HOUR)) WHERE item = 'A'`,
			[]string{
				"+I[A, 2021-04-15 22:00:00.000, 2021-04-15 23:00:00.000, 2021-04-15 22:59:59.999]",
				"+I[A, 2021-04-15 22:00:00.000, 2021-04-15 23:00:00.000, 2021-04-15 22:59:59.999]",
			}},
		{"TVF SESSION rows", `SELECT item, window_start, window_end, window_time FROM TABLE(
  SESSION(TABLE MyTable3, DESCRIPTOR(ts_ltz), INTERVAL '5' MINUTE)) WHERE item = 'C'`,
			[]string{
				"+I[C, 2021-04-15 22:01:00.000, 2021-04-15 22:10:00.000, 2021-04-15 22:09:59.999]",
				"+I[C, 2021-04-15 22:11:00.000, 2021-04-15 22:16:00.000, 2021-04-15 22:15:59.999]",
			}},
		{"window join", `SELECT l.item, l.window_start, l.window_end, l.price, r.price FROM
  (SELECT * FROM TABLE(TUMBLE(TABLE MyTable3, DESCRIPTOR(ts_ltz), INTERVAL '1' HOUR))) l JOIN
  (SELECT * FROM TABLE(TUMBLE(TABLE MyTable3, DESCRIPTOR(ts_ltz), INTERVAL '1' HOUR))) r
  ON l.item = r.item AND l.window_start = r.window_start AND l.window_end = r.window_end WHERE l.item = 'B'`,
			[]string{
				"+I[B, 2021-04-15 22:00:00.000, 2021-04-15 23:00:00.000, 1.2, 1.2]",
				"+I[B, 2021-04-15 22:00:00.000, 2021-04-15 23:00:00.000, 1.2, 2.5]",
				"+I[B, 2021-04-15 22:00:00.000, 2021-04-15 23:00:00.000, 2.5, 1.2]",
				"+I[B, 2021-04-15 22:00:00.000, 2021-04-15 23:00:00.000, 2.5, 2.5]",
			}},
		{"window top-N", `SELECT item, price, window_start, window_end FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY price DESC, item) AS rn
  FROM TABLE(TUMBLE(TABLE MyTable3, DESCRIPTOR(ts_ltz), INTERVAL '10' MINUTE))) WHERE rn = 1`,
			[]string{
				"+I[C, 3.8, 2021-04-15 22:00:00.000, 2021-04-15 22:10:00.000]",
				"+I[C, 3.8, 2021-04-15 22:10:00.000, 2021-04-15 22:20:00.000]",
			}},
		{"legacy HOP", `SELECT HOP_START(ts_ltz, INTERVAL '1' HOUR, INTERVAL '2' HOUR), HOP_END(ts_ltz, INTERVAL '1' HOUR, INTERVAL '2' HOUR),
  HOP_ROWTIME(ts_ltz, INTERVAL '1' HOUR, INTERVAL '2' HOUR), COUNT(*) FROM MyTable3 GROUP BY HOP(ts_ltz, INTERVAL '1' HOUR, INTERVAL '2' HOUR)`,
			[]string{
				"+I[2021-04-15 21:00:00.000, 2021-04-15 23:00:00.000, 2021-04-15 22:59:59.999, 6]",
				"+I[2021-04-15 22:00:00.000, 2021-04-16 00:00:00.000, 2021-04-15 23:59:59.999, 6]",
			}},
		{"legacy SESSION", `SELECT SESSION_START(ts_ltz, INTERVAL '5' MINUTE), SESSION_END(ts_ltz, INTERVAL '5' MINUTE),
  SESSION_ROWTIME(ts_ltz, INTERVAL '5' MINUTE), COUNT(*) FROM MyTable3 GROUP BY SESSION(ts_ltz, INTERVAL '5' MINUTE)`,
			[]string{
				"+I[2021-04-15 22:01:00.000, 2021-04-15 22:10:00.000, 2021-04-15 22:09:59.999, 5]",
				"+I[2021-04-15 22:11:00.000, 2021-04-15 22:16:00.000, 2021-04-15 22:15:59.999, 1]",
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkRows(t, zone, tzRun(t, zone, tzItems, tzTable+tc.query+";"), tc.want)
		})
	}
}

// TestWindowTimeTypeOverLTZ: over a TIMESTAMP_LTZ rowtime, window_start
// and window_end are TIMESTAMP(3) and window_time is TIMESTAMP_LTZ(3)
// *ROWTIME*, as the page's DESC MyView5 shows.
func TestWindowTimeTypeOverLTZ(t *testing.T) {
	e, err := sluice.Open(sluice.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	src := strings.ReplaceAll(tzTable, "$DIR", t.TempDir()) + `
CREATE VIEW MyView5 AS SELECT
  TUMBLE_START(ts_ltz, INTERVAL '10' MINUTES) AS window_start,
  TUMBLE_END(ts_ltz, INTERVAL '10' MINUTES) AS window_end,
  TUMBLE_ROWTIME(ts_ltz, INTERVAL '10' MINUTES) AS window_rowtime,
  item, MAX(price) AS max_price
FROM MyTable3 GROUP BY TUMBLE(ts_ltz, INTERVAL '10' MINUTES), item;
DESCRIBE MyView5;
CREATE VIEW v AS SELECT * FROM TABLE(TUMBLE(TABLE MyTable3, DESCRIPTOR(ts_ltz), INTERVAL '10' MINUTES));
DESCRIBE v;`
	res, err := e.Exec(context.Background(), "t.sql", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range map[int][]string{
		2: {"window_start", "TIMESTAMP(3)", "window_end", "TIMESTAMP(3)", "window_rowtime", "TIMESTAMP_LTZ(3) *ROWTIME*"},
		4: {"window_start", "TIMESTAMP(3)", "window_end", "TIMESTAMP(3)", "window_time", "TIMESTAMP_LTZ(3) *ROWTIME*"},
	} {
		desc := res[i].Message
		for j := 0; j < len(want); j += 2 {
			if !strings.Contains(desc, want[j]) || !strings.Contains(desc[strings.Index(desc, want[j]):], want[j+1]) {
				t.Errorf("DESCRIBE: %s is not %s:\n%s", want[j], want[j+1], desc)
			}
		}
	}
}

// TestDaylightSavingWindows: the page's "Daylight Saving Time Support"
// and "Window Aggregation over TIMESTAMP_LTZ": in America/Los_Angeles a
// day-long TUMBLE over a TIMESTAMP_LTZ rowtime is a day of Los Angeles
// wall-clock time: 2021-03-14, when 02:00 jumps to 03:00, holds 23 hours
// of instants, and 2021-11-07, when 01:00-02:00 comes twice, 25. An
// hourly window over the repeated hour holds both passes, and its
// window_time is the first pass's 01:59:59.999 (java.time takes the
// earlier offset).
func TestDaylightSavingWindows(t *testing.T) {
	ms := func(s string) string {
		ts, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return strconv.FormatInt(ts.UnixMilli(), 10)
	}
	rows := ""
	for _, r := range []struct{ item, at string }{
		{"a", "2021-03-14T07:30:00Z"}, // 03-13 23:30 PST
		{"b", "2021-03-14T08:00:00Z"}, // 03-14 00:00 PST: epoch1 of the page
		{"b", "2021-03-14T09:00:00Z"}, // 01:00 PST: epoch2
		{"b", "2021-03-14T10:00:00Z"}, // 03:00 PDT: epoch3
		{"b", "2021-03-14T11:00:00Z"}, // 04:00 PDT: epoch4
		{"b", "2021-03-15T06:59:00Z"}, // 03-14 23:59 PDT: still 03-14
		{"c", "2021-03-15T07:00:00Z"}, // 03-15 00:00 PDT
		{"d", "2021-11-07T08:30:00Z"}, // 11-07 01:30 PDT
		{"d", "2021-11-07T09:30:00Z"}, // 11-07 01:30 PST, the hour again
		{"d", "2021-11-08T07:59:00Z"}, // 11-07 23:59 PST: still 11-07
		{"e", "2021-11-08T08:00:00Z"}, // 11-08 00:00 PST
	} {
		rows += r.item + ",0," + ms(r.at) + "\n"
	}
	const zone = "America/Los_Angeles"
	day := tzTable + `SELECT window_start, window_end, window_time, COUNT(*) AS n,
  CAST(TIMESTAMPDIFF(HOUR, MIN(ts_ltz), MAX(ts_ltz)) AS INT) AS span
FROM TABLE(TUMBLE(TABLE MyTable3, DESCRIPTOR(ts_ltz), INTERVAL '1' DAY))
GROUP BY window_start, window_end, window_time;`
	checkRows(t, "days", tzRun(t, zone, rows, day), []string{
		"+I[2021-03-13 00:00:00.000, 2021-03-14 00:00:00.000, 2021-03-13 23:59:59.999, 1, 0]",
		"+I[2021-03-14 00:00:00.000, 2021-03-15 00:00:00.000, 2021-03-14 23:59:59.999, 5, 22]",
		"+I[2021-03-15 00:00:00.000, 2021-03-16 00:00:00.000, 2021-03-15 23:59:59.999, 1, 0]",
		"+I[2021-11-07 00:00:00.000, 2021-11-08 00:00:00.000, 2021-11-07 23:59:59.999, 3, 23]",
		"+I[2021-11-08 00:00:00.000, 2021-11-09 00:00:00.000, 2021-11-08 23:59:59.999, 1, 0]",
	})
	hour := tzTable + `SELECT window_start, window_end, window_time, COUNT(*) AS n
FROM TABLE(TUMBLE(TABLE MyTable3, DESCRIPTOR(ts_ltz), INTERVAL '1' HOUR))
WHERE item = 'd' GROUP BY window_start, window_end, window_time;`
	checkRows(t, "the repeated hour", tzRun(t, zone, rows, hour), []string{
		"+I[2021-11-07 01:00:00.000, 2021-11-07 02:00:00.000, 2021-11-07 01:59:59.999, 2]",
		"+I[2021-11-07 23:00:00.000, 2021-11-08 00:00:00.000, 2021-11-07 23:59:59.999, 1]",
	})
}

// TestProctimeWindowOverLTZ is the page's MyView3: a legacy TUMBLE over
// PROCTIME() is aligned in the session time zone too. The clock is fixed
// at 2021-04-15 14:01:00Z, so every row's processing time is that instant:
// the window is 14:00-14:10 in UTC and 22:00-22:10 in Asia/Shanghai.
func TestProctimeWindowOverLTZ(t *testing.T) {
	now := time.Date(2021, 4, 15, 14, 1, 0, 0, time.UTC)
	for zone, want := range map[string]string{
		"UTC":           "+I[2021-04-15 14:00:00.000, 2021-04-15 14:10:00.000, A, 1.8]",
		"Asia/Shanghai": "+I[2021-04-15 22:00:00.000, 2021-04-15 22:10:00.000, A, 1.8]",
	} {
		dir := t.TempDir()
		writeFile(t, dir, "items.csv", tzItems)
		out, err := runSQLOpts(t, sluice.Options{Now: func() time.Time { return now }}, dir, "SET 'table.local-time-zone' = '"+zone+`';
CREATE TABLE MyTable1 (item STRING, price DOUBLE, ts BIGINT, proctime AS PROCTIME())
WITH ('connector' = 'filesystem', 'path' = '$DIR/items.csv', 'format' = 'csv');
SELECT
  TUMBLE_START(proctime, INTERVAL '10' MINUTES) AS window_start,
  TUMBLE_END(proctime, INTERVAL '10' MINUTES) AS window_end,
  item, MAX(price) AS max_price
FROM MyTable1 WHERE item = 'A'
GROUP BY TUMBLE(proctime, INTERVAL '10' MINUTES), item;`)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Split(strings.TrimSpace(out), "\n")[1:]; strings.Join(got, "\n") != want {
			t.Errorf("%s: %q, want %q", zone, got, want)
		}
		// The window TVF over PROCTIME() too; window_time is a
		// TIMESTAMP_LTZ, printed in the session zone.
		out, err = runSQLOpts(t, sluice.Options{Now: func() time.Time { return now }}, dir, "SET 'table.local-time-zone' = '"+zone+`';
CREATE TABLE MyTable1 (item STRING, price DOUBLE, ts BIGINT, proctime AS PROCTIME())
WITH ('connector' = 'filesystem', 'path' = '$DIR/items.csv', 'format' = 'csv');
SELECT window_start, window_end, window_time, COUNT(*) AS n
FROM TABLE(CUMULATE(TABLE MyTable1, DESCRIPTOR(proctime), INTERVAL '5' MINUTES, INTERVAL '1' HOUR))
GROUP BY window_start, window_end, window_time;`)
		if err != nil {
			t.Fatal(err)
		}
		h := want[3:16] // the window's date and hour
		tvf := "+I[" + h + ":00:00.000, " + h + ":05:00.000, " + h + ":04:59.999, 6]"
		if got := strings.Split(strings.TrimSpace(out), "\n")[1:]; !slices.Contains(got, tvf) {
			t.Errorf("%s: CUMULATE over PROCTIME() gave %q, want a row %q", zone, got, tvf)
		}
	}
}
