package interop_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/jdbc"
	"github.com/sluicesql/sluice/types"
)

// sinkEvent is one input row of the sink tests.
type sinkEvent struct {
	id   int64
	k, v int64
	x    string
}

// genSinkEvents returns n events: a unique id, a key k of 50, a group x of
// 6 and a value v.
func genSinkEvents(seed uint64, n int) []sinkEvent {
	rng := rand.New(rand.NewPCG(seed, 7))
	out := make([]sinkEvent, n)
	for i := range out {
		out[i] = sinkEvent{id: int64(i), k: rng.Int64N(50), x: string(rune('a' + rng.IntN(6))), v: rng.Int64N(1000)}
	}
	return out
}

func writeSinkEvents(t *testing.T, ev []sinkEvent) string {
	t.Helper()
	var b strings.Builder
	for _, e := range ev {
		fmt.Fprintf(&b, `{"id":%d,"k":%d,"x":"%s","v":%d}`+"\n", e.id, e.k, e.x, e.v)
	}
	path := filepath.Join(t.TempDir(), "events.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// sinkQueries are updating and appending queries over events, the
// database tables they write (%s is the table's name) and what the
// tables hold at the end, computed from the events; columns joined by |.
var sinkQueries = []struct {
	name   string
	sluice string // columns and PRIMARY KEY of the Sluice table
	ddl    string // CREATE TABLE %s (...)
	opts   string // more WITH options
	query  string // INSERT INTO %s ...
	want   func([]sinkEvent) []string
}{
	{
		// An aggregate: every new event retracts its group's row.
		name:   "agg",
		sluice: "x STRING, n BIGINT, s BIGINT, hi INT, PRIMARY KEY (x) NOT ENFORCED",
		ddl:    "CREATE TABLE %s (x VARCHAR(10) PRIMARY KEY, n BIGINT, s BIGINT, hi INT)",
		opts:   ", 'sink.buffer-flush.max-rows' = '7'",
		query:  "INSERT INTO %s SELECT x, COUNT(*), SUM(v), MAX(v) FROM events GROUP BY x",
		want: func(ev []sinkEvent) []string {
			type agg struct{ n, s, hi int64 }
			m := map[string]*agg{}
			for _, e := range ev {
				a := m[e.x]
				if a == nil {
					a = &agg{hi: -1}
					m[e.x] = a
				}
				a.n++
				a.s += e.v
				a.hi = max(a.hi, e.v)
			}
			var out []string
			for x, a := range m {
				out = append(out, fmt.Sprintf("%s|%d|%d|%d", x, a.n, a.s, a.hi))
			}
			return out
		},
	},
	{
		// An aggregate of an aggregate: how many keys have each count.
		// Counts come and go: their rows are deleted when no key has
		// them any more.
		name:   "hist",
		sluice: "n BIGINT, keys BIGINT, PRIMARY KEY (n) NOT ENFORCED",
		ddl:    "CREATE TABLE %s (n BIGINT PRIMARY KEY, `keys` BIGINT)",
		query:  "INSERT INTO %s SELECT n, COUNT(*) FROM (SELECT k, COUNT(*) AS n FROM events GROUP BY k) g GROUP BY n",
		want: func(ev []sinkEvent) []string {
			per := map[int64]int64{}
			for _, e := range ev {
				per[e.k]++
			}
			hist := map[int64]int64{}
			for _, n := range per {
				hist[n]++
			}
			var out []string
			for n, c := range hist {
				out = append(out, fmt.Sprintf("%d|%d", n, c))
			}
			return out
		},
	},
	{
		// A Top-N without the row number: a row pushed out of its
		// group's top 3 is deleted.
		name:   "top",
		sluice: "x STRING, id BIGINT, v INT, PRIMARY KEY (x, id) NOT ENFORCED",
		ddl:    "CREATE TABLE %s (x VARCHAR(10), id BIGINT, v INT, PRIMARY KEY (x, id))",
		opts:   ", 'sink.buffer-flush.max-rows' = '3'",
		query: `INSERT INTO %s SELECT x, id, v FROM (
  SELECT x, id, v, ROW_NUMBER() OVER (PARTITION BY x ORDER BY v DESC, id) AS rn FROM events) t WHERE rn <= 3`,
		want: func(ev []sinkEvent) []string { return topN(ev, false) },
	},
	{
		// A Top-N with the row number in the key: rows move between
		// ranks, updated in place.
		name:   "topn",
		sluice: "x STRING, rn BIGINT, id BIGINT, v INT, PRIMARY KEY (x, rn) NOT ENFORCED",
		ddl:    "CREATE TABLE %s (x VARCHAR(10), rn BIGINT, id BIGINT, v INT, PRIMARY KEY (x, rn))",
		query: `INSERT INTO %s SELECT x, rn, id, v FROM (
  SELECT x, id, v, ROW_NUMBER() OVER (PARTITION BY x ORDER BY v DESC, id) AS rn FROM events) t WHERE rn <= 3`,
		want: func(ev []sinkEvent) []string { return topN(ev, true) },
	},
	{
		// Append: no primary key, every row inserted.
		name:   "app",
		sluice: "id BIGINT, x STRING, v INT",
		ddl:    "CREATE TABLE %s (id BIGINT, x VARCHAR(10), v INT)",
		opts:   ", 'sink.buffer-flush.max-rows' = '0', 'sink.buffer-flush.interval' = '0'",
		query:  "INSERT INTO %s SELECT id, x, v FROM events WHERE v >= 900",
		want: func(ev []sinkEvent) []string {
			var out []string
			for _, e := range ev {
				if e.v >= 900 {
					out = append(out, fmt.Sprintf("%d|%s|%d", e.id, e.x, e.v))
				}
			}
			return out
		},
	},
}

// topN is every group's top 3 events by v (then id): x|id|v, or with
// ranks x|rn|id|v.
func topN(ev []sinkEvent, ranks bool) []string {
	groups := map[string][]sinkEvent{}
	for _, e := range ev {
		groups[e.x] = append(groups[e.x], e)
	}
	var out []string
	for x, g := range groups {
		slices.SortFunc(g, func(a, b sinkEvent) int {
			if a.v != b.v {
				return int(b.v - a.v)
			}
			return int(a.id - b.id)
		})
		for i, e := range g[:min(3, len(g))] {
			if ranks {
				out = append(out, fmt.Sprintf("%s|%d|%d|%d", x, i+1, e.id, e.v))
			} else {
				out = append(out, fmt.Sprintf("%s|%d|%d", x, e.id, e.v))
			}
		}
	}
	return out
}

// tableRows reads every row of a table, its columns joined by |, sorted.
func (d *jdbcDB) tableRows(t *testing.T, table string) []string {
	t.Helper()
	rs, err := d.db.Query("SELECT * FROM " + table)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	cols, _ := rs.Columns()
	var out []string
	for rs.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			parts[i] = fmt.Sprint(v)
		}
		out = append(out, strings.Join(parts, "|"))
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func (d *jdbcDB) postgres() bool { return strings.HasPrefix(d.url, "jdbc:postgresql:") }

// ddl adapts MySQL-quoted DDL to the database.
func (d *jdbcDB) ddlFor(q string) string {
	if d.postgres() {
		return strings.ReplaceAll(q, "`", `"`)
	}
	return q
}

// sinkTable creates a table named uniquely (the databases are shared) and
// drops it at the end.
func (d *jdbcDB) sinkTable(t *testing.T, prefix, ddl string) string {
	t.Helper()
	name := fmt.Sprintf("sluice_%s_%d", prefix, time.Now().UnixNano()%1e9)
	d.exec(t, fmt.Sprintf(d.ddlFor(ddl), name))
	t.Cleanup(func() { d.db.Exec("DROP TABLE " + name) })
	return name
}

func TestJDBCSinkPostgres(t *testing.T) { testJDBCSink(t, postgresDB(t)) }
func TestJDBCSinkMySQL(t *testing.T)    { testJDBCSink(t, mysqlDB(t)) }

func testJDBCSink(t *testing.T, d *jdbcDB) {
	t.Run("queries", func(t *testing.T) { testSinkQueries(t, d, false) })
	t.Run("queries checkpointed", func(t *testing.T) { testSinkQueries(t, d, true) })
	t.Run("types", func(t *testing.T) { testSinkTypes(t, d) })
	t.Run("errors", func(t *testing.T) { testSinkErrors(t, d) })
	t.Run("interval", func(t *testing.T) { testSinkInterval(t, d) })
}

// testSinkQueries runs the updating and appending queries, in one job, into
// tables of the database; each table must end as computed from the input.
// A checkpointed job keeps its state in a 'state.dir': its upserting sinks
// are exactly-once, writing at each completed checkpoint.
func testSinkQueries(t *testing.T, d *jdbcDB, checkpointed bool) {
	ev := genSinkEvents(1, 3000)
	path := writeSinkEvents(t, ev)
	var b strings.Builder
	if checkpointed {
		fmt.Fprintf(&b, "SET 'state.dir' = '%s';\nSET 'execution.checkpointing.interval' = '10ms';\n", t.TempDir())
	}
	fmt.Fprintf(&b, "CREATE TABLE events (id BIGINT, k INT, x STRING, v INT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');\n", path)
	names := make([]string, len(sinkQueries))
	for i, q := range sinkQueries {
		names[i] = d.sinkTable(t, q.name, q.ddl)
		fmt.Fprintf(&b, "CREATE TABLE %s_out (%s) WITH ('connector' = 'jdbc', 'url' = '%s', 'table-name' = '%s', 'username' = '%s'%s);\n",
			q.name, q.sluice, d.url, names[i], d.user, q.opts)
	}
	b.WriteString("EXECUTE STATEMENT SET BEGIN\n")
	for _, q := range sinkQueries {
		fmt.Fprintf(&b, q.query+";\n", q.name+"_out")
	}
	b.WriteString("END;\n")
	e := openEngine(t)
	finish(t, e.start(t, b.String()), false)
	for i, q := range sinkQueries {
		want := q.want(ev)
		sort.Strings(want)
		got := d.tableRows(t, names[i])
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: the table holds (%d rows)\n%s\nwant (%d rows)\n%s", q.name, len(got), strings.Join(got, "\n"), len(want), strings.Join(want, "\n"))
		} else {
			t.Logf("%s: %d rows, as computed", q.name, len(got))
		}
	}
}

// typeSchema has a column of every kind the sink writes.
var typeSchema = types.NewSchema(
	types.Column{Name: "id", Type: types.Int},
	types.Column{Name: "dec", Type: types.Decimal(10, 2)},
	types.Column{Name: "ts", Type: types.Timestamp(3)},
	types.Column{Name: "ltz", Type: types.TimestampLTZ(3)},
	types.Column{Name: "d", Type: types.Date},
	types.Column{Name: "tm", Type: types.Time(0)},
	types.Column{Name: "b", Type: types.Boolean},
	types.Column{Name: "bin", Type: types.Bytes},
	types.Column{Name: "f", Type: types.Double},
	types.Column{Name: "big", Type: types.BigInt},
	types.Column{Name: "s", Type: types.String},
	types.Column{Name: "sm", Type: types.SmallInt},
)

// testSinkTypes writes a row of every kind of value, NULLs, an update and a
// delete through the sink, and reads them back through the connector's
// lookup (and, for times, as the database shows them).
func testSinkTypes(t *testing.T, d *jdbcDB) {
	ctx := context.Background()
	ddl := `CREATE TABLE %s (id INT PRIMARY KEY, dec NUMERIC(10, 2), ts TIMESTAMP(3), ltz TIMESTAMPTZ(3), d DATE, tm TIME(0),
		b BOOLEAN, bin BYTEA, f DOUBLE PRECISION, big BIGINT, s TEXT, sm SMALLINT)`
	if !d.postgres() {
		ddl = `CREATE TABLE %s (id INT PRIMARY KEY, ` + "`dec`" + ` DECIMAL(10, 2), ts DATETIME(3), ltz TIMESTAMP(3) NULL, d DATE, tm TIME,
		b BOOLEAN, bin VARBINARY(20), f DOUBLE, big BIGINT, s TEXT, sm SMALLINT)`
	}
	name := d.sinkTable(t, "types", ddl)
	tbl := d.table(name, typeSchema, nil)
	tbl.PrimaryKey = []string{"id"}
	sink, err := jdbc.New().CreateSink(tbl, connector.Env{})
	if err != nil {
		t.Fatal(err)
	}
	ts := func(s string) int64 {
		us, err := types.ParseTimestamp(s)
		if err != nil {
			t.Fatal(err)
		}
		return us
	}
	row := func(id int32, vals ...types.Value) []types.Value {
		return append([]types.Value{types.Int32Value(id)}, vals...)
	}
	b := types.NewBatch(8, typeSchema.Len())
	add := func(kind types.RowKind, vals []types.Value) { copy(b.AddRow(kind, types.NoOrigin, len(vals)), vals) }
	add(types.Insert, row(1, types.DecimalValue(150, 2), types.TimestampValue(ts("2024-05-06 07:08:09.123")),
		types.TimestampLTZValue(ts("2024-01-01 10:00:00.5")), types.DateValue(types.DateFromCivil(2024, 2, 29)),
		types.TimeValue(ts("1970-01-01 23:59:59")), types.BoolValue(true), types.BytesValue([]byte{0, 1, 0xff}),
		types.DoubleValue(0.25), types.BigIntValue(1<<40), types.StringValue("żółw ✓ 'q' \\ \"d\""), types.IntValue(types.KindSmallInt, -7)))
	add(types.Insert, row(2, make([]types.Value, 11)...)) // NULLs
	add(types.Insert, row(3, types.DecimalValue(-99999999, 2), types.TimestampValue(ts("1969-12-31 23:59:59.999")),
		types.TimestampLTZValue(1e6), types.DateValue(types.DateFromCivil(1970, 1, 1)), types.TimeValue(0),
		types.BoolValue(false), types.BytesValue([]byte{}), types.DoubleValue(-1e10), types.BigIntValue(-1<<62),
		types.StringValue(""), types.IntValue(types.KindSmallInt, 32767)))
	add(types.Insert, row(4, types.DecimalValue(1, 0), types.NullValue, types.NullValue, types.NullValue, types.NullValue,
		types.NullValue, types.NullValue, types.NullValue, types.NullValue, types.StringValue("gone"), types.NullValue))
	if err := sink.Write(ctx, b); err != nil {
		t.Fatal(err)
	}
	if err := sink.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// An update (-U skipped, +U upserted) and a delete, in a later batch.
	b.Reset()
	add(types.UpdateBefore, row(3, make([]types.Value, 11)...))
	add(types.UpdateAfter, row(3, types.DecimalValue(-99999999, 2), types.TimestampValue(ts("1969-12-31 23:59:59.999")),
		types.TimestampLTZValue(1e6), types.DateValue(types.DateFromCivil(1970, 1, 1)), types.TimeValue(0),
		types.BoolValue(false), types.BytesValue([]byte{}), types.DoubleValue(-1e10), types.BigIntValue(-1<<62),
		types.StringValue("updated"), types.IntValue(types.KindSmallInt, 32767)))
	add(types.Delete, row(4, make([]types.Value, 11)...))
	if err := sink.Write(ctx, b); err != nil {
		t.Fatal(err)
	}
	if err := sink.Close(); err != nil { // Close writes what is buffered
		t.Fatal(err)
	}

	src, err := jdbc.New().CreateLookup(d.table(name, typeSchema, connector.Options{"lookup.cache": "FULL"}), connector.Env{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var got []string
	if err := src.(connector.FullSource).Load(ctx, func(row []types.Value) error {
		got = append(got, formatRow(row, typeSchema))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	want := []string{
		`1|1.50|2024-05-06 07:08:09.123|2024-01-01 10:00:00.500|2024-02-29|23:59:59|TRUE|x'0001ff'|0.25|1099511627776|żółw ✓ 'q' \ "d"|-7`,
		"2|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL",
		"3|-999999.99|1969-12-31 23:59:59.999|1970-01-01 00:00:01.000|1970-01-01|00:00:00|FALSE|x''|-1.0E10|-4611686018427387904|updated|32767",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("read back:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// As the database has them: TIMESTAMP as its wall-clock time,
	// TIMESTAMP_LTZ as the instant.
	q := "SELECT CAST(ts AS CHAR(30)), UNIX_TIMESTAMP(ltz) FROM " + name + " WHERE id = 1"
	if d.postgres() {
		q = "SELECT ts::text, extract(epoch from ltz)::text FROM " + name + " WHERE id = 1"
	}
	var wall, epoch string
	if err := d.db.QueryRow(q).Scan(&wall, &epoch); err != nil {
		t.Fatal(err)
	}
	if wall != "2024-05-06 07:08:09.123" || strings.TrimRight(epoch, "0") != "1704103200.5" {
		t.Errorf("in the database: ts %s, ltz %s seconds since the epoch; want 2024-05-06 07:08:09.123 and 1704103200.5", wall, epoch)
	}
}

// testSinkErrors checks that a table that cannot be written fails the
// first write at once, naming the table and the column.
func testSinkErrors(t *testing.T, d *jdbcDB) {
	ctx := context.Background()
	name := d.sinkTable(t, "err", "CREATE TABLE %s (id INT, name VARCHAR(5), n SMALLINT)")
	schema := types.NewSchema(types.Column{Name: "id", Type: types.Int}, types.Column{Name: "name", Type: types.String},
		types.Column{Name: "n", Type: types.Int})
	row := types.NewBatch(1, 3)
	copy(row.AddRow(types.Insert, types.NoOrigin, 3), []types.Value{types.Int32Value(1), types.StringValue("x"), types.Int32Value(1)})
	try := func(t *testing.T, tbl connector.Table, b *types.Batch, want ...string) {
		t.Helper()
		tbl.Options["sink.max-retries"] = "5" // none may be tried
		sink, err := jdbc.New().CreateSink(tbl, connector.Env{})
		if err != nil {
			t.Fatal(err)
		}
		defer sink.Close()
		start := time.Now()
		err = sink.Write(ctx, b)
		if err == nil {
			err = sink.Flush(ctx)
		}
		if err == nil {
			t.Fatalf("no error; want %q", want)
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Fatalf("error %v\nwant it to say %q", err, w)
			}
		}
		if strings.Contains(err.Error(), "retries") || time.Since(start) > 900*time.Millisecond {
			t.Errorf("a permanent error was retried: %v", err)
		}
		t.Log(err)
	}
	t.Run("missing table", func(t *testing.T) {
		try(t, d.table(name+"_gone", schema, nil), row, name+"_gone")
	})
	t.Run("missing column", func(t *testing.T) {
		s := types.NewSchema(types.Column{Name: "id", Type: types.Int}, types.Column{Name: "nope", Type: types.String}, types.Column{Name: "n", Type: types.Int})
		try(t, d.table(name, s, nil), row, "nope")
	})
	t.Run("type mismatch", func(t *testing.T) {
		s := types.NewSchema(types.Column{Name: "id", Type: types.Int}, types.Column{Name: "name", Type: types.Int}, types.Column{Name: "n", Type: types.Int})
		b := types.NewBatch(1, 3)
		copy(b.AddRow(types.Insert, types.NoOrigin, 3), []types.Value{types.Int32Value(1), types.Int32Value(1), types.Int32Value(1)})
		try(t, d.table(name, s, nil), b, "'dim'", "column 'name'", "cannot take INT values")
	})
	t.Run("value too long", func(t *testing.T) {
		b := types.NewBatch(1, 3)
		copy(b.AddRow(types.Insert, types.NoOrigin, 3), []types.Value{types.Int32Value(1), types.StringValue("too long"), types.Int32Value(1)})
		want := []string{"'dim'", name}
		if !d.postgres() { // PostgreSQL's error names the type only
			want = append(want, "'name'")
		}
		try(t, d.table(name, schema, nil), b, want...)
	})
	t.Run("out of range", func(t *testing.T) {
		b := types.NewBatch(1, 3)
		copy(b.AddRow(types.Insert, types.NoOrigin, 3), []types.Value{types.Int32Value(1), types.StringValue("x"), types.Int32Value(100000)})
		try(t, d.table(name, schema, nil), b, "'dim'", name, "'n'")
	})
	t.Run("no unique key", func(t *testing.T) {
		tbl := d.table(name, schema, nil)
		tbl.PrimaryKey = []string{"id"}
		try(t, tbl, row, "has no primary key or unique index on exactly (id)")
	})
	if n := len(d.tableRows(t, name)); n != 0 {
		t.Errorf("%d rows written by failed writes", n)
	}
}

// testSinkInterval writes a few rows and flushes nothing: the interval
// writes them.
func testSinkInterval(t *testing.T, d *jdbcDB) {
	name := d.sinkTable(t, "interval", "CREATE TABLE %s (id INT PRIMARY KEY, v INT)")
	schema := types.NewSchema(types.Column{Name: "id", Type: types.Int}, types.Column{Name: "v", Type: types.Int})
	tbl := d.table(name, schema, connector.Options{"sink.buffer-flush.interval": "20ms"})
	tbl.PrimaryKey = []string{"id"}
	sink, err := jdbc.New().CreateSink(tbl, connector.Env{})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	b := types.NewBatch(3, 2)
	for i := range int32(3) {
		copy(b.AddRow(types.Insert, types.NoOrigin, 2), []types.Value{types.Int32Value(i), types.Int32Value(i * 10)})
	}
	if err := sink.Write(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(d.tableRows(t, name)) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("the interval wrote %v", d.tableRows(t, name))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// BenchmarkJDBCSink upserts 100,000 rows over 10,000 keys (and, "append",
// inserts them into a table without a key) through the sink, at least
// once, with 'sink.buffer-flush.max-rows' of 100 (Flink's default) and
// 1,000; a flush at the end. It reports rows written per second.
//
//	SLUICE_PG_DSN=postgres://postgres@127.0.0.1:5432/test SLUICE_MYSQL_DSN='root@tcp(127.0.0.1:3306)/test' \
//	  go test ./test/interop -run '^$' -bench JDBCSink -benchtime 3x
func BenchmarkJDBCSink(b *testing.B) {
	const rows, keys = 100_000, 10_000
	for _, db := range []struct {
		name string
		open func(testing.TB) *jdbcDB
	}{{"postgres", postgresDB}, {"mariadb", mysqlDB}} {
		for _, mode := range []struct {
			name    string
			keyed   bool
			maxRows string
		}{{"upsert/max-rows=100", true, "100"}, {"upsert/max-rows=1000", true, "1000"}, {"append/max-rows=1000", false, "1000"}} {
			b.Run(db.name+"/"+mode.name, func(b *testing.B) {
				d := db.open(b)
				name := fmt.Sprintf("sluice_bench_sink_%d", time.Now().UnixNano()%1e9)
				ddl := "CREATE TABLE " + name + " (id BIGINT PRIMARY KEY, name VARCHAR(40), n BIGINT, price DECIMAL(10, 2))"
				if !mode.keyed {
					ddl = "CREATE TABLE " + name + " (id BIGINT, name VARCHAR(40), n BIGINT, price DECIMAL(10, 2))"
				}
				d.exec(b, ddl)
				b.Cleanup(func() { d.db.Exec("DROP TABLE " + name) })
				schema := types.NewSchema(types.Column{Name: "id", Type: types.BigInt}, types.Column{Name: "name", Type: types.String},
					types.Column{Name: "n", Type: types.BigInt}, types.Column{Name: "price", Type: types.Decimal(10, 2)})
				tbl := d.table(name, schema, connector.Options{"sink.buffer-flush.max-rows": mode.maxRows, "sink.buffer-flush.interval": "0"})
				if mode.keyed {
					tbl.PrimaryKey = []string{"id"}
				}
				batches := make([]*types.Batch, 0, rows/1000)
				for i := 0; i < rows; i += 1000 {
					bt := types.NewBatch(1000, 4)
					for j := i; j < i+1000; j++ {
						v := bt.AddRow(types.Insert, types.NoOrigin, 4)
						v[0], v[1], v[2], v[3] = types.BigIntValue(int64(j%keys)), types.StringValue(fmt.Sprintf("name %d", j)), types.BigIntValue(int64(j)), types.DecimalValue(int64(j), 2)
					}
					batches = append(batches, bt)
				}
				ctx := context.Background()
				b.ResetTimer()
				for range b.N {
					sink, err := jdbc.New().CreateSink(tbl, connector.Env{})
					if err != nil {
						b.Fatal(err)
					}
					for _, bt := range batches {
						if err := sink.Write(ctx, bt); err != nil {
							b.Fatal(err)
						}
					}
					if err := sink.Close(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
			})
		}
	}
}
