package sluice_test

// Metamorphic tests of window Top-N.
//
// TestMetamorphicWindowTopN runs window Top-N queries (ROW_NUMBER, RANK,
// DENSE_RANK, window deduplication, Top-N after a window aggregation) over
// the random inputs of TestMetamorphicWindows, under configurations that
// must not change the result (parallelism, one file or several, a UNION
// ALL of two tables), and compares each run with a naive computation in
// plain Go: every window's rows sorted per partition, numbered, cut at N.
// The queries are chosen so that their result does not depend on the order
// in which tied rows arrive: rows that tie under ROW_NUMBER, or that a
// deduplication picks among, print the same.

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// wrQuery is one window Top-N query.
type wrQuery struct {
	name string
	win  mmWindow
	// fn is ROW_NUMBER, RANK or DENSE_RANK; dedup is a window
	// deduplication keeping the first row by ts (fn ROW_NUMBER, n 1).
	fn    string
	n     int
	byKey bool // PARTITION BY k as well
	asc   bool // ORDER BY v ASC (NULLS FIRST), else v DESC (NULLS LAST)
	// byK orders by k ASC (NULLS FIRST) instead: many rows tie.
	byK   bool
	dedup bool
	// agg ranks the keys of each window by COUNT(*) (a Top-N after a
	// window aggregation) instead of the rows by v.
	agg bool
}

func tvfSQL(w mmWindow) string {
	var args string
	switch w.kind {
	case "TUMBLE":
		args = sqlInterval(w.size)
	case "HOP", "CUMULATE":
		args = sqlInterval(w.slide) + ", " + sqlInterval(w.size)
	}
	if w.offset != 0 {
		args += ", " + sqlInterval(w.offset)
	}
	return fmt.Sprintf("TABLE(%s(TABLE t, DESCRIPTOR(ts), %s))", w.kind, args)
}

func (in *mmInput) wrSinkDDL(q wrQuery) string {
	cols := "window_start TIMESTAMP(3), window_end TIMESTAMP(3), k STRING, v " + in.valueType() + ", ts TIMESTAMP(3), r BIGINT"
	switch {
	case q.dedup:
		cols = "window_start TIMESTAMP(3), window_end TIMESTAMP(3), k STRING, ts TIMESTAMP(3)"
	case q.agg:
		cols = "window_start TIMESTAMP(3), window_end TIMESTAMP(3), k STRING, cnt BIGINT, r BIGINT"
	}
	return fmt.Sprintf("CREATE TABLE %s (%s) WITH ('connector' = 'print', 'print-identifier' = '%s');\n", q.name, cols, q.name)
}

func (q wrQuery) sql() string {
	part := "window_start, window_end"
	if q.byKey {
		part += ", k"
	}
	switch {
	case q.dedup:
		return fmt.Sprintf("INSERT INTO %s SELECT window_start, window_end, k, ts FROM (\n"+
			"  SELECT *, ROW_NUMBER() OVER (PARTITION BY %s ORDER BY ts) AS rn FROM %s\n) WHERE rn = 1;\n",
			q.name, part, tvfSQL(q.win))
	case q.agg:
		return fmt.Sprintf("INSERT INTO %s SELECT window_start, window_end, k, cnt, r FROM (\n"+
			"  SELECT *, %s() OVER (PARTITION BY window_start, window_end ORDER BY cnt DESC) AS r FROM (\n"+
			"    SELECT window_start, window_end, k, COUNT(*) AS cnt FROM %s GROUP BY window_start, window_end, k)\n"+
			") WHERE r <= %d;\n", q.name, q.fn, tvfSQL(q.win), q.n)
	}
	order := "v DESC"
	switch {
	case q.byK:
		order = "k"
	case q.asc:
		order = "v"
	}
	if q.fn == "ROW_NUMBER" {
		order += ", ts DESC"
	}
	return fmt.Sprintf("INSERT INTO %s SELECT window_start, window_end, k, v, ts, r FROM (\n"+
		"  SELECT *, %s() OVER (PARTITION BY %s ORDER BY %s) AS r FROM %s\n) WHERE r <= %d;\n",
		q.name, q.fn, part, order, tvfSQL(q.win), q.n)
}

func (in *mmInput) wrJob(dir string, c mmConfig, qs []wrQuery) string {
	src := in.job(dir, c)
	// Keep the tables (and the view) of the layout; replace the queries.
	src = src[:strings.Index(src, "CREATE TABLE "+in.queries[0].name)]
	var b strings.Builder
	b.WriteString(src)
	for _, q := range qs {
		b.WriteString(in.wrSinkDDL(q))
	}
	b.WriteString("EXECUTE STATEMENT SET\nBEGIN\n")
	for _, q := range qs {
		b.WriteString(q.sql())
	}
	b.WriteString("END;\n")
	return b.String()
}

// wrExpected computes q's output lines over the input in plain Go.
func (in *mmInput) wrExpected(q wrQuery) []string {
	type part struct {
		start, end int64
		k          string
	}
	kstr := func(r mmRow) string {
		if r.kNull {
			return "null"
		}
		return r.k
	}
	vstr := func(r mmRow) string {
		switch {
		case r.vNull:
			return "null"
		case in.decimal:
			return fmtDecimal(r.v, 2)
		}
		return strconv.FormatInt(r.v, 10)
	}
	var lines []string
	if q.agg {
		counts := map[part]int64{}
		for _, r := range in.rows {
			for _, w := range windowsOf(q.win, r.ts) {
				counts[part{w[0], w[1], kstr(r)}]++
			}
		}
		byWin := map[[2]int64][]part{}
		for p := range counts {
			byWin[[2]int64{p.start, p.end}] = append(byWin[[2]int64{p.start, p.end}], p)
		}
		for _, ps := range byWin {
			slices.SortFunc(ps, func(a, b part) int { return int(counts[b] - counts[a]) })
			num := 0
			for i, p := range ps {
				switch {
				case i > 0 && counts[p] == counts[ps[i-1]]:
				case q.fn == "DENSE_RANK":
					num++
				default:
					num = i + 1
				}
				if num > q.n {
					break
				}
				lines = append(lines, fmt.Sprintf("%s> +I[%s, %s, %s, %d, %d]", q.name, fmtTS(p.start), fmtTS(p.end), p.k, counts[p], num))
			}
		}
		sort.Strings(lines)
		return lines
	}
	parts := map[part][]mmRow{}
	for _, r := range in.rows {
		for _, w := range windowsOf(q.win, r.ts) {
			p := part{start: w[0], end: w[1]}
			if q.byKey {
				p.k = kstr(r)
			}
			parts[p] = append(parts[p], r)
		}
	}
	// cmpV orders by v (NULLs first ascending, last descending), or by k.
	cmpV := func(a, b mmRow) int {
		if q.byK {
			switch {
			case a.kNull && b.kNull:
				return 0
			case a.kNull:
				return -1
			case b.kNull:
				return 1
			}
			return strings.Compare(a.k, b.k)
		}
		switch {
		case a.vNull && b.vNull:
			return 0
		case a.vNull:
			return map[bool]int{true: -1, false: 1}[q.asc]
		case b.vNull:
			return map[bool]int{true: 1, false: -1}[q.asc]
		}
		c := int(min(max(a.v-b.v, -1), 1))
		if !q.asc {
			c = -c
		}
		return c
	}
	for p, rows := range parts {
		if q.dedup {
			first := rows[0]
			for _, r := range rows {
				if r.ts < first.ts {
					first = r
				}
			}
			lines = append(lines, fmt.Sprintf("%s> +I[%s, %s, %s, %s]", q.name, fmtTS(p.start), fmtTS(p.end), kstr(first), fmtTS(first.ts)))
			continue
		}
		cmp := cmpV
		if q.fn == "ROW_NUMBER" {
			cmp = func(a, b mmRow) int {
				if c := cmpV(a, b); c != 0 {
					return c
				}
				return int(min(max(b.ts-a.ts, -1), 1))
			}
		}
		slices.SortStableFunc(rows, cmp)
		num := 0
		for i, r := range rows {
			switch {
			case q.fn == "ROW_NUMBER":
				num = i + 1
			case i > 0 && cmp(r, rows[i-1]) == 0:
			case q.fn == "DENSE_RANK":
				num++
			default:
				num = i + 1
			}
			if num > q.n {
				break
			}
			lines = append(lines, fmt.Sprintf("%s> +I[%s, %s, %s, %s, %s, %d]", q.name, fmtTS(p.start), fmtTS(p.end), kstr(r), vstr(r), fmtTS(r.ts), num))
		}
	}
	sort.Strings(lines)
	return lines
}

func TestMetamorphicWindowTopN(t *testing.T) {
	seeds := []int64{1, 2}
	minRows, maxRows := 2000, 8000
	configs := []mmConfig{
		{layout: layoutOne, par: 1}, {layout: layoutOne, par: 3},
		{layout: layoutSplit, par: 1}, {layout: layoutSplit, par: 2},
		{layout: layoutUnion, par: 2},
	}
	switch {
	case testing.Short():
		seeds, minRows, maxRows = seeds[:1], 500, 1000
	case raceEnabled():
		seeds, minRows, maxRows = seeds[:1], 1000, 2500
	}
	if *metamorphicSeed != 0 {
		seeds = []int64{*metamorphicSeed}
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			in := genInput(seed, *metamorphicRows, minRows, maxRows)
			win := map[string]mmWindow{}
			for _, q := range in.queries {
				win[q.name] = q.win
			}
			qs := []wrQuery{
				{name: "rownum_k", win: win["tumble_k"], fn: "ROW_NUMBER", n: 3, byKey: true},
				{name: "rank_k", win: win["tumble_offset_k"], fn: "RANK", n: 2, byKey: true, asc: true},
				{name: "dense_all", win: win["hop_k"], fn: "DENSE_RANK", n: 2, byK: true},
				{name: "rank_all", win: win["cumulate_k"], fn: "RANK", n: 3, byK: true},
				{name: "dedup_k", win: win["tumble_k"], fn: "ROW_NUMBER", n: 1, byKey: true, dedup: true},
				{name: "agg_rank", win: win["hop_k"], fn: "RANK", n: 2, agg: true},
				{name: "agg_dense", win: win["tumble_k"], fn: "DENSE_RANK", n: 2, agg: true},
			}
			dir := t.TempDir()
			writeInput(t, dir, in)
			for _, c := range configs {
				src := in.wrJob(dir, c, qs)
				got, err := runJob(t, src)
				if err != nil {
					t.Fatalf("seed %d, %s: %v\njob:\n%s", seed, c, err, src)
				}
				for _, q := range qs {
					o := got[q.name]
					if o == nil {
						o = &mmOutput{}
					}
					if o.changes > 0 {
						t.Errorf("seed %d, %s, query %s printed %d update or delete rows; a window Top-N only inserts\n%s",
							seed, c, q.name, o.changes, q.sql())
					}
					want := in.wrExpected(q)
					if a, b := multisetDiff(o.rows, want); a != nil || b != nil {
						t.Errorf("seed %d, %s, query %s differs from the naive computation (%d rows, want %d)\n%s\n"+
							"rows only in the engine's output:\n%s\nrows only in the naive result:\n%s",
							seed, c, q.name, len(o.rows), len(want), q.sql(), firstLines(a, 10), firstLines(b, 10))
					}
				}
				if t.Failed() {
					return
				}
			}
		})
	}
}
