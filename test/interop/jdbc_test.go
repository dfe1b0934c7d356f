package interop_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/jdbc"
	"github.com/sluicesql/sluice/connector/lookupcache"
	"github.com/sluicesql/sluice/types"
)

// jdbcDB is one database the jdbc connector is checked against: how to
// reach it from the test and from a table's options, and its DDL.
type jdbcDB struct {
	db   *sql.DB
	url  string // JDBC URL
	user string
	ddl  string // CREATE TABLE %s (...) with the columns of dimSchema
	// tzDDL is CREATE TABLE %s (id INT, ts <a type holding an instant>);
	// instant is an SQL expression for the instant 2024-01-01 10:00:00 UTC.
	tzDDL, instant string
}

// dimSchema is the Sluice side of the dimension table: a composite key
// (id, region) that is not unique, and a column of each kind.
var dimSchema = types.NewSchema(
	types.Column{Name: "id", Type: types.Int},
	types.Column{Name: "region", Type: types.String},
	types.Column{Name: "name", Type: types.String},
	types.Column{Name: "price", Type: types.Decimal(10, 2)},
	types.Column{Name: "active", Type: types.Boolean},
	types.Column{Name: "born", Type: types.Date},
	types.Column{Name: "seen", Type: types.Timestamp(3)},
	types.Column{Name: "data", Type: types.Bytes},
	types.Column{Name: "big", Type: types.BigInt},
	types.Column{Name: "at", Type: types.Time(0)},
	types.Column{Name: "ratio", Type: types.Double},
)

// dimRows are inserted with placeholders ? (rewritten for PostgreSQL).
var dimRows = [][]any{
	{1, "eu", "one", "1.50", true, "2000-01-31", "2024-05-06 07:08:09.123", []byte{1, 2}, int64(1) << 40, "10:11:12", 0.25},
	{2, "eu", "two", "2.00", false, "1999-12-31", "2024-05-06 07:08:09", []byte{}, int64(-5), "00:00:00", -1.5},
	{2, "eu", "two again", nil, nil, nil, nil, nil, nil, nil, nil}, // a duplicate key, NULLs
	{2, "us", "two in us", "-3.25", true, "1970-01-01", "1970-01-01 00:00:00", []byte("x"), int64(0), "23:59:59", 1e10},
	{3, "eu", nil, "0.00", false, "2024-02-29", "2024-02-29 23:59:59.999", nil, int64(7), "12:00:00", 0},
}

// dimWant is what dimRows read back as, formatted, in table order.
var dimWant = []string{
	"1|eu|one|1.50|TRUE|2000-01-31|2024-05-06 07:08:09.123|x'0102'|1099511627776|10:11:12|0.25",
	"2|eu|two|2.00|FALSE|1999-12-31|2024-05-06 07:08:09.000|x''|-5|00:00:00|-1.5",
	"2|eu|two again|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL",
	"2|us|two in us|-3.25|TRUE|1970-01-01|1970-01-01 00:00:00.000|x'78'|0|23:59:59|1.0E10",
	"3|eu|NULL|0.00|FALSE|2024-02-29|2024-02-29 23:59:59.999|NULL|7|12:00:00|0.0",
}

func formatRow(row []types.Value, s types.Schema) string {
	parts := make([]string, len(row))
	for i, v := range row {
		parts[i] = types.FormatValue(v, s.Columns[i].Type)
	}
	return strings.Join(parts, "|")
}

func postgresDB(t testing.TB) *jdbcDB {
	dsn := os.Getenv("SLUICE_PG_DSN")
	if dsn == "" {
		t.Skip("set SLUICE_PG_DSN (e.g. postgres://postgres@127.0.0.1:5432/test) to test the jdbc connector against PostgreSQL")
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	db := stdlib.OpenDB(*cfg)
	t.Cleanup(func() { db.Close() })
	u := url.URL{Host: fmt.Sprintf("%s:%d", cfg.Host, cfg.Port), Path: "/" + cfg.Database}
	return &jdbcDB{
		db:   db,
		url:  "jdbc:postgresql:" + u.String(),
		user: cfg.User,
		ddl: `CREATE TABLE %s (id INT, region VARCHAR(10), name TEXT, price NUMERIC(10, 2), active BOOLEAN,
			born DATE, seen TIMESTAMP(3), data BYTEA, big BIGINT, at TIME(0), ratio DOUBLE PRECISION)`,
		tzDDL:   "CREATE TABLE %s (id INT, ts TIMESTAMPTZ)",
		instant: "to_timestamp(1704103200)",
	}
}

func mysqlDB(t testing.TB) *jdbcDB {
	dsn := os.Getenv("SLUICE_MYSQL_DSN")
	if dsn == "" {
		t.Skip("set SLUICE_MYSQL_DSN (e.g. root@tcp(127.0.0.1:3306)/test) to test the jdbc connector against MySQL/MariaDB")
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	// Create the database if it is missing.
	name := cfg.DBName
	cfg.DBName = ""
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	admin := sql.OpenDB(conn)
	if _, err := admin.Exec("CREATE DATABASE IF NOT EXISTS `" + name + "`"); err != nil {
		t.Fatalf("cannot create database %s: %v", name, err)
	}
	admin.Close()
	cfg.DBName = name
	if conn, err = mysql.NewConnector(cfg); err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	t.Cleanup(func() { db.Close() })
	u := "jdbc:mysql://" + cfg.Addr + "/" + name
	if cfg.Passwd != "" {
		u += "?password=" + url.QueryEscape(cfg.Passwd)
	}
	return &jdbcDB{
		db:   db,
		url:  u,
		user: cfg.User,
		ddl: `CREATE TABLE %s (id INT, region VARCHAR(10), name TEXT, price DECIMAL(10, 2), active TINYINT(1),
			born DATE, seen DATETIME(3), data VARBINARY(10), big BIGINT, at TIME, ratio DOUBLE)`,
		tzDDL:   "CREATE TABLE %s (id INT, ts TIMESTAMP NULL)",
		instant: "FROM_UNIXTIME(1704103200)",
	}
}

func (d *jdbcDB) placeholders(q string) string {
	if !strings.HasPrefix(d.url, "jdbc:postgresql:") {
		return q
	}
	var b strings.Builder
	n := 0
	for _, c := range q {
		if c == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

func (d *jdbcDB) exec(t testing.TB, q string, args ...any) {
	t.Helper()
	if _, err := d.db.Exec(d.placeholders(q), args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// createDim creates and fills a dimension table named uniquely (the
// databases are shared with other tests) and drops it at the end.
func (d *jdbcDB) createDim(t *testing.T) string {
	name := fmt.Sprintf("sluice_dim_%d", time.Now().UnixNano()%1e9)
	d.exec(t, fmt.Sprintf(d.ddl, name))
	t.Cleanup(func() { d.db.Exec("DROP TABLE " + name) })
	for _, r := range dimRows {
		d.exec(t, "INSERT INTO "+name+" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", r...)
	}
	return name
}

func (d *jdbcDB) table(name string, schema types.Schema, opts connector.Options) connector.Table {
	o := connector.Options{"connector": "jdbc", "url": d.url, "table-name": name, "username": d.user}
	for k, v := range opts {
		o[k] = v
	}
	return connector.Table{Name: "dim", Schema: schema, Options: o}
}

func TestJDBCPostgres(t *testing.T) { testJDBC(t, postgresDB(t)) }
func TestJDBCMySQL(t *testing.T)    { testJDBC(t, mysqlDB(t)) }

func testJDBC(t *testing.T, d *jdbcDB) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	name := d.createDim(t)

	t.Run("full", func(t *testing.T) {
		src, err := jdbc.New().CreateLookup(d.table(name, dimSchema, connector.Options{
			"lookup.cache": "FULL", "lookup.full-cache.reload-interval": "1 h"}), connector.Env{})
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		full := src.(connector.FullSource)
		var got []string
		if err := full.Load(ctx, func(row []types.Value) error {
			got = append(got, formatRow(row, dimSchema))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		sort.Strings(got)
		want := append([]string(nil), dimWant...)
		sort.Strings(want)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("loaded:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if full.ReloadInterval() != time.Hour {
			t.Errorf("reload interval %v", full.ReloadInterval())
		}
	})

	lookup := func(t *testing.T, l connector.KeyLookuper, keyCols []int, key ...types.Value) []string {
		t.Helper()
		rows, err := l.Lookup(ctx, keyCols, key, nil)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]string, len(rows))
		for i, r := range rows {
			out[i] = formatRow(r, dimSchema)
		}
		sort.Strings(out)
		return out
	}
	check := func(t *testing.T, got []string, want ...string) {
		t.Helper()
		sort.Strings(want)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}

	t.Run("partial", func(t *testing.T) {
		src, err := jdbc.New().CreateLookup(d.table(name, dimSchema, connector.Options{
			"lookup.cache": "PARTIAL", "lookup.partial-cache.max-rows": "100", "lookup.partial-cache.max-bytes": "1 mb"}), connector.Env{})
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		l := src.(connector.KeyLookuper)
		idRegion := []int{0, 1}
		// A composite key with duplicates; a key given as BIGINT.
		check(t, lookup(t, l, idRegion, types.Int32Value(2), types.StringValue("eu")), dimWant[1], dimWant[2])
		check(t, lookup(t, l, idRegion, types.BigIntValue(2), types.StringValue("us")), dimWant[3])
		check(t, lookup(t, l, idRegion, types.Int32Value(2), types.StringValue("asia")))
		check(t, lookup(t, l, idRegion, types.Int32Value(3), types.StringValue("eu")), dimWant[4])
		// Another key set, on the same table; the key column order is the caller's.
		check(t, lookup(t, l, []int{1}, types.StringValue("eu")), dimWant[0], dimWant[1], dimWant[2], dimWant[4])
		check(t, lookup(t, l, []int{2, 0}, types.StringValue("one"), types.Int32Value(1)), dimWant[0])
		// By a DECIMAL, a DATE and a TIMESTAMP.
		check(t, lookup(t, l, []int{3}, types.DecimalValue(-325, 2)), dimWant[3])
		check(t, lookup(t, l, []int{5}, types.DateValue(types.DateFromCivil(2024, 2, 29))), dimWant[4])
		seen, _ := types.ParseTimestamp("2024-05-06 07:08:09.123")
		check(t, lookup(t, l, []int{6}, types.TimestampValue(seen)), dimWant[0])

		// Changes in the database are not seen while cached; a missing key
		// is cached too.
		d.exec(t, "UPDATE "+name+" SET name = 'changed' WHERE id = 3")
		d.exec(t, "INSERT INTO "+name+" (id, region, name) VALUES (2, 'asia', 'new')")
		check(t, lookup(t, l, idRegion, types.Int32Value(3), types.StringValue("eu")), dimWant[4])
		check(t, lookup(t, l, idRegion, types.Int32Value(2), types.StringValue("asia")))
		st := src.(lookupcache.Cached).CacheStats()
		if st.Hits != 2 || st.Misses != 9 || st.Rows != 9 {
			t.Errorf("cache stats %+v", st)
		}
		d.exec(t, "UPDATE "+name+" SET name = NULL WHERE id = 3")
		d.exec(t, "DELETE FROM "+name+" WHERE region = 'asia'")
	})

	t.Run("none", func(t *testing.T) {
		src, err := jdbc.New().CreateLookup(d.table(name, dimSchema, nil), connector.Env{})
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		l := src.(connector.KeyLookuper)
		k := []types.Value{types.Int32Value(3), types.StringValue("eu")}
		check(t, lookup(t, l, []int{0, 1}, k...), dimWant[4])
		d.exec(t, "UPDATE "+name+" SET name = 'changed' WHERE id = 3")
		got := lookup(t, l, []int{0, 1}, k...)
		if len(got) != 1 || !strings.HasPrefix(got[0], "3|eu|changed|") {
			t.Fatalf("without a cache the change is not seen: %v", got)
		}
		d.exec(t, "UPDATE "+name+" SET name = NULL WHERE id = 3")
	})

	t.Run("batch", func(t *testing.T) {
		// A batch of keys is fetched in one statement (two past 128
		// keys) and finds, key by key, the rows a Lookup of each finds:
		// also where the database's collation makes 'EU' equal 'eu'.
		open := func() connector.BatchKeyLookuper {
			src, err := jdbc.New().CreateLookup(d.table(name, dimSchema, nil), connector.Env{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { src.Close() })
			return src.(connector.BatchKeyLookuper)
		}
		seen, _ := types.ParseTimestamp("2024-05-06 07:08:09.123")
		cases := []struct {
			keyCols []int
			keys    [][]types.Value
		}{
			{[]int{0, 1}, [][]types.Value{
				{types.Int32Value(2), types.StringValue("eu")}, {types.Int32Value(9), types.StringValue("eu")},
				{types.Int32Value(2), types.StringValue("us")}, {types.Int32Value(2), types.StringValue("eu")},
				{types.Int32Value(3), types.StringValue("EU")}, {types.Int32Value(1), types.StringValue("eu ")},
			}},
			{[]int{1}, [][]types.Value{{types.StringValue("us")}, {types.StringValue("eu")}, {types.StringValue("Us")}}},
			{[]int{3}, [][]types.Value{{types.DecimalValue(-325, 2)}, {types.DecimalValue(150, 2)}, {types.DecimalValue(1, 0)}}},
			{[]int{6}, [][]types.Value{{types.TimestampValue(seen)}, {types.TimestampValue(0)}}},
		}
		var many [][]types.Value
		for id := range int32(200) {
			many = append(many, []types.Value{types.Int32Value(id % 5)}, []types.Value{types.Int32Value(1000 + id)})
		}
		cases = append(cases, struct {
			keyCols []int
			keys    [][]types.Value
		}{[]int{0}, many})
		for _, c := range cases {
			one, batch := open(), open()
			want := make([][]string, len(c.keys))
			for i, key := range c.keys {
				want[i] = lookup(t, one, c.keyCols, key...)
			}
			got := make([][]string, len(c.keys))
			if err := batch.LookupBatch(ctx, c.keyCols, c.keys, func(i int, row []types.Value) bool {
				got[i] = append(got[i], formatRow(row, dimSchema))
				return true
			}); err != nil {
				t.Fatal(err)
			}
			for i := range got {
				sort.Strings(got[i])
				if strings.Join(got[i], "\n") != strings.Join(want[i], "\n") {
					t.Fatalf("key set %v, key %v: batch found\n%s\nLookup found\n%s", c.keyCols, c.keys[i], strings.Join(got[i], "\n"), strings.Join(want[i], "\n"))
				}
			}
			st := batch.(lookupcache.Cached).CacheStats()
			distinct := map[string]bool{}
			for _, k := range c.keys {
				distinct[fmt.Sprint(k)] = true
			}
			if calls := int64(len(distinct)+127) / 128; st.Fetches != calls || st.Fetched != int64(len(distinct)) {
				t.Errorf("key set %v: %d keys (%d distinct) fetched in %d statements of %d keys; want %d", c.keyCols, len(c.keys), len(distinct), st.Fetches, st.Fetched, calls)
			}
		}
	})

	t.Run("concurrent", func(t *testing.T) {
		src, err := jdbc.New().CreateLookup(d.table(name, dimSchema, connector.Options{
			"lookup.cache": "PARTIAL", "lookup.partial-cache.max-rows": "3"}), connector.Env{})
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		l := src.(connector.KeyLookuper)
		want := map[int32]int{1: 1, 2: 2, 3: 1, 4: 0}
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := range 40 {
					id := int32((n+g)%4 + 1)
					rows, err := l.Lookup(ctx, []int{0, 1}, []types.Value{types.Int32Value(id), types.StringValue("eu")}, nil)
					if err != nil {
						t.Error(err)
						return
					}
					if len(rows) != want[id] {
						t.Errorf("id %d: %d rows, want %d", id, len(rows), want[id])
						return
					}
				}
			}()
		}
		wg.Wait()
	})

	t.Run("instants", func(t *testing.T) {
		tz := name + "_tz"
		d.exec(t, fmt.Sprintf(d.tzDDL, tz))
		t.Cleanup(func() { d.db.Exec("DROP TABLE " + tz) })
		d.exec(t, "INSERT INTO "+tz+" VALUES (1, "+d.instant+"), (2, NULL)")
		for _, typ := range []types.Type{types.TimestampLTZ(3), types.Timestamp(3)} {
			s := types.NewSchema(types.Column{Name: "id", Type: types.Int}, types.Column{Name: "ts", Type: typ})
			src, err := jdbc.New().CreateLookup(d.table(tz, s, connector.Options{"lookup.cache": "FULL"}), connector.Env{})
			if err != nil {
				t.Fatal(err)
			}
			got := map[int64]types.Value{}
			err = src.(connector.FullSource).Load(ctx, func(row []types.Value) error {
				got[row[0].Int()] = row[1]
				return nil
			})
			src.Close()
			if err != nil {
				t.Fatal(err)
			}
			if v := got[1]; v.Kind() != typ.Kind || v.Int() != 1704103200_000000 {
				t.Errorf("as %s: %v (kind %s, %d µs), want 2024-01-01 10:00:00 UTC", typ, v, v.Kind(), v.Int())
			}
			if v, ok := got[2]; !ok || !v.IsNull() {
				t.Errorf("as %s: NULL read as %v", typ, v)
			}
		}
	})

	t.Run("type mismatch", func(t *testing.T) {
		bad := types.NewSchema(types.Column{Name: "id", Type: types.Int}, types.Column{Name: "name", Type: types.Int})
		src, err := jdbc.New().CreateLookup(d.table(name, bad, connector.Options{"lookup.max-retries": "5"}), connector.Env{})
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		start := time.Now()
		_, err = src.(connector.KeyLookuper).Lookup(ctx, []int{0}, []types.Value{types.Int32Value(1)}, nil)
		if err == nil || !strings.Contains(err.Error(), "column 'name' is TEXT (string) in the database and cannot be read as INT") {
			t.Fatalf("error %v", err)
		}
		if time.Since(start) > 2*time.Second {
			t.Errorf("a type mismatch was retried")
		}
		// A BIGINT value that does not fit INT.
		narrow := types.NewSchema(types.Column{Name: "id", Type: types.Int}, types.Column{Name: "big", Type: types.Int})
		src2, err := jdbc.New().CreateLookup(d.table(name, narrow, connector.Options{"lookup.cache": "FULL"}), connector.Env{})
		if err != nil {
			t.Fatal(err)
		}
		defer src2.Close()
		err = src2.(connector.FullSource).Load(ctx, func([]types.Value) error { return nil })
		if err == nil || !strings.Contains(err.Error(), "column 'big': cannot read 1099511627776 as INT: out of range") {
			t.Fatalf("error %v", err)
		}
		// A column the table does not have.
		missing := types.NewSchema(types.Column{Name: "id", Type: types.Int}, types.Column{Name: "nope", Type: types.Int})
		src3, err := jdbc.New().CreateLookup(d.table(name, missing, connector.Options{"lookup.cache": "FULL"}), connector.Env{})
		if err != nil {
			t.Fatal(err)
		}
		defer src3.Close()
		if err := src3.(connector.FullSource).Load(ctx, func([]types.Value) error { return nil }); err == nil || !strings.Contains(err.Error(), "nope") {
			t.Fatalf("error %v", err)
		}
		// Looked up by key, a missing column or table fails at once: no
		// retry brings them.
		for _, tc := range []struct {
			table  string
			schema types.Schema
			want   string
		}{{name, missing, "nope"}, {name + "_gone", dimSchema, name + "_gone"}} {
			src, err := jdbc.New().CreateLookup(d.table(tc.table, tc.schema, connector.Options{"lookup.max-retries": "5"}), connector.Env{})
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			start := time.Now()
			_, err = src.(connector.KeyLookuper).Lookup(ctx, []int{0}, []types.Value{types.Int32Value(1)}, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "retries") {
				t.Fatalf("lookup in %s: error %v", tc.table, err)
			}
			if time.Since(start) > 2*time.Second {
				t.Errorf("lookup in %s: retried", tc.table)
			}
		}
	})
}

// BenchmarkJDBCLookup looks up batches of 1,024 distinct random keys of a
// 100,000-row table without a cache: a Lookup per key (a round trip
// each) against LookupBatch (a statement per 128 keys).
//
//	SLUICE_PG_DSN=postgres://postgres@127.0.0.1:5432/test SLUICE_MYSQL_DSN='root@tcp(127.0.0.1:3306)/test' \
//	  go test ./test/interop -run '^$' -bench JDBCLookup -benchtime 20x
func BenchmarkJDBCLookup(b *testing.B) {
	for _, db := range []struct {
		name string
		open func(testing.TB) *jdbcDB
		fill string
	}{
		{"postgres", postgresDB, "INSERT INTO %s SELECT g, 'r' || (g %% 10), 'name ' || g FROM generate_series(0, 99999) AS g"},
		{"mariadb", mysqlDB, "INSERT INTO %s SELECT seq, CONCAT('r', seq %% 10), CONCAT('name ', seq) FROM seq_0_to_99999"},
	} {
		b.Run(db.name, func(b *testing.B) {
			d := db.open(b)
			name := fmt.Sprintf("sluice_bench_%d", time.Now().UnixNano()%1e9)
			d.exec(b, "CREATE TABLE "+name+" (id INT PRIMARY KEY, region VARCHAR(10), name VARCHAR(40))")
			b.Cleanup(func() { d.db.Exec("DROP TABLE " + name) })
			d.exec(b, fmt.Sprintf(db.fill, name))
			schema := types.NewSchema(types.Column{Name: "id", Type: types.Int}, types.Column{Name: "region", Type: types.String}, types.Column{Name: "name", Type: types.String})
			src, err := jdbc.New().CreateLookup(d.table(name, schema, nil), connector.Env{})
			if err != nil {
				b.Fatal(err)
			}
			defer src.Close()
			l := src.(connector.BatchKeyLookuper)
			ctx := context.Background()
			r := rand.New(rand.NewPCG(1, 2))
			keys := make([][]types.Value, 1024)
			for i, id := range r.Perm(100_000)[:len(keys)] {
				keys[i] = []types.Value{types.Int32Value(int32(id))}
			}
			run := func(b *testing.B, lookup func() int) {
				found := 0
				for b.Loop() {
					found += lookup()
				}
				if found != b.N*len(keys) {
					b.Fatalf("%d rows for %d keys", found, b.N*len(keys))
				}
				b.ReportMetric(float64(b.N*len(keys))/b.Elapsed().Seconds(), "keys/s")
			}
			b.Run("per-key", func(b *testing.B) {
				run(b, func() int {
					n := 0
					for _, k := range keys {
						rows, err := l.Lookup(ctx, []int{0}, k, nil)
						if err != nil {
							b.Fatal(err)
						}
						n += len(rows)
					}
					return n
				})
			})
			b.Run("batch", func(b *testing.B) {
				run(b, func() int {
					n := 0
					if err := l.LookupBatch(ctx, []int{0}, keys, func(int, []types.Value) bool { n++; return true }); err != nil {
						b.Fatal(err)
					}
					return n
				})
			})
		})
	}
}
