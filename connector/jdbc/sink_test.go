package jdbc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/lib/pq"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/types"
)

// The sink's statements against a database are tested in test/interop
// (PostgreSQL and MariaDB); these tests need none.

func TestInsertSQL(t *testing.T) {
	cols := []string{"k1", "k2", "v"}
	for _, c := range []struct {
		d    dialect
		keys []string
		n    int
		want string
	}{
		{postgres, nil, 2, `INSERT INTO "t" ("k1", "k2", "v") VALUES ($1, $2, $3), ($4, $5, $6)`},
		{mySQL, nil, 1, "INSERT INTO `t` (`k1`, `k2`, `v`) VALUES (?, ?, ?)"},
		{postgres, []string{"k1", "k2"}, 2,
			`INSERT INTO "t" ("k1", "k2", "v") VALUES ($1, $2, $3), ($4, $5, $6) ON CONFLICT ("k1", "k2") DO UPDATE SET "v" = EXCLUDED."v"`},
		{mySQL, []string{"k1"}, 2,
			"INSERT INTO `t` (`k1`, `k2`, `v`) VALUES (?, ?, ?), (?, ?, ?) ON DUPLICATE KEY UPDATE `k2` = VALUES(`k2`), `v` = VALUES(`v`)"},
	} {
		if got := c.d.insertSQL("t", cols, c.keys, c.n); got != c.want {
			t.Errorf("%v %v %d:\n got %s\nwant %s", c.d, c.keys, c.n, got, c.want)
		}
	}
	// Every column in the key: nothing to update.
	if got, want := postgres.insertSQL("s.t", cols[:2], cols[:2], 1), `INSERT INTO "s"."t" ("k1", "k2") VALUES ($1, $2) ON CONFLICT ("k1", "k2") DO NOTHING`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got, want := mySQL.insertSQL("t", cols[:1], cols[:1], 1), "INSERT INTO `t` (`k1`) VALUES (?) ON DUPLICATE KEY UPDATE `k1` = VALUES(`k1`)"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestDeleteSQL(t *testing.T) {
	for _, c := range []struct {
		d    dialect
		keys []string
		n    int
		want string
	}{
		{postgres, []string{"id"}, 1, `DELETE FROM "t" WHERE "id" = $1`},
		{postgres, []string{"id"}, 3, `DELETE FROM "t" WHERE "id" IN ($1, $2, $3)`},
		{mySQL, []string{"a", "b"}, 1, "DELETE FROM `t` WHERE `a` = ? AND `b` = ?"},
		{postgres, []string{"a", "b"}, 2, `DELETE FROM "t" WHERE ("a", "b") IN (($1, $2), ($3, $4))`},
	} {
		if got := c.d.deleteSQL("t", c.keys, c.n); got != c.want {
			t.Errorf("%v %v %d:\n got %s\nwant %s", c.d, c.keys, c.n, got, c.want)
		}
	}
}

func TestCheckWritable(t *testing.T) {
	ok := []struct {
		d  dialect
		db string
		t  types.Type
	}{
		{postgres, "INT4", types.Int}, {postgres, "INT2", types.BigInt}, {mySQL, "TINYINT", types.Boolean},
		{postgres, "NUMERIC", types.Decimal(10, 2)}, {postgres, "NUMERIC", types.Double}, {mySQL, "DOUBLE", types.Decimal(5, 1)},
		{postgres, "TEXT", types.String}, {postgres, "UUID", types.String}, {postgres, "JSONB", types.Char(3)},
		{postgres, "BYTEA", types.Bytes}, {mySQL, "BLOB", types.String}, {postgres, "BOOL", types.Boolean},
		{postgres, "DATE", types.Date}, {mySQL, "TIME", types.Time(0)}, {postgres, "TIMESTAMPTZ", types.Timestamp(3)},
		{mySQL, "DATETIME", types.TimestampLTZ(6)},
	}
	for _, c := range ok {
		if err := checkWritable(c.d, "c", c.db, c.t); err != nil {
			t.Errorf("%v %s from %s: %v", c.d, c.db, c.t, err)
		}
	}
	bad := []struct {
		d    dialect
		db   string
		t    types.Type
		want string
	}{
		{postgres, "TEXT", types.Int, "column 'c' is TEXT (string) in the database and cannot take INT values; declare it as STRING"},
		{postgres, "INT4", types.Boolean, "declare it as TINYINT, SMALLINT, INT or BIGINT"},
		{postgres, "INT8", types.Decimal(10, 2), "cannot take DECIMAL(10, 2) values"},
		{postgres, "BYTEA", types.String, "declare it as BYTES"},
		{mySQL, "DATE", types.Timestamp(3), "declare it as DATE"},
		{postgres, "INTERVAL", types.String, "column 'c' has database type INTERVAL, which the jdbc connector cannot write"},
	}
	for _, c := range bad {
		err := checkWritable(c.d, "c", c.db, c.t)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v %s from %s: %v, want %q", c.d, c.db, c.t, err, c.want)
		}
	}
}

func TestWriteParam(t *testing.T) {
	for _, c := range []struct {
		v    types.Value
		want any
	}{
		{types.NullValue, nil},
		{types.IntValue(types.KindSmallInt, -3), int64(-3)},
		{types.DecimalValue(-5, 3), "-0.005"},
		{types.TimeValue(3_723_000_001), "01:02:03.000001"},
		{types.TimestampLTZValue(1_500_000), time.UnixMicro(1_500_000).UTC()},
		{types.BytesValue([]byte{0, 1}), []byte{0, 1}},
	} {
		got, err := writeParam(c.v)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("writeParam(%v) = %#v, %v; want %#v", c.v, got, err, c.want)
		}
	}
	if _, err := writeParam(types.ArrayValue(nil)); err == nil {
		t.Error("an ARRAY became a parameter")
	}
}

func TestPermanentWriteError(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&pq.Error{Code: "42P01"}, true},  // no such table
		{&pq.Error{Code: "22001"}, true},  // value too long
		{&pq.Error{Code: "23505"}, true},  // unique violation
		{&pq.Error{Code: "40001"}, false}, // serialization failure
		{&pq.Error{Code: "40P01"}, false}, // deadlock
		{&pq.Error{Code: "57P01"}, false}, // the server shuts down
		{&mysql.MySQLError{Number: 1146}, true},
		{&mysql.MySQLError{Number: 1406}, true},
		{&mysql.MySQLError{Number: 1213}, false}, // deadlock
		{&mysql.MySQLError{Number: 1205}, false}, // lock wait timeout
		{errors.New(`sql: converting argument $1 type: unsupported type []int, a slice of int`), true},
		{errors.New("connection reset by peer"), false},
	} {
		if got := permanentWriteError(fmt.Errorf("wrapped: %w", c.err)); got != c.want {
			t.Errorf("%v: permanent %v, want %v", c.err, got, c.want)
		}
	}
}

// TestIntLimits: an integer that does not fit its PostgreSQL column is
// refused before it is sent, with the column's type; one that fits, NULL,
// BIGINT columns and MySQL's are passed on.
func TestIntLimits(t *testing.T) {
	s := &Sink{limits: []intLimit{intLimitOf(postgres, "INT2"), intLimitOf(postgres, "INT4"), intLimitOf(postgres, "INT8"), intLimitOf(mySQL, "SMALLINT")}}
	for _, c := range []struct {
		col  int
		v    types.Value
		want string // the error, "" for none
	}{
		{0, types.Int32Value(32767), ""},
		{0, types.Int32Value(-32768), ""},
		{0, types.Int32Value(32768), "32768 is out of the range of SMALLINT"},
		{0, types.Int32Value(-32769), "-32769 is out of the range of SMALLINT"},
		{0, types.NullValue, ""},
		{1, types.BigIntValue(1 << 31), "2147483648 is out of the range of INTEGER"},
		{1, types.BigIntValue(-1 << 31), ""},
		{2, types.BigIntValue(1 << 62), ""},
		{3, types.Int32Value(100000), ""},
		{4, types.Int32Value(100000), ""}, // a column the check did not see
	} {
		_, err := s.param(c.col, c.v)
		if got := fmt.Sprint(err); c.want == "" && err != nil || c.want != "" && got != c.want {
			t.Errorf("column %d, %v: %v, want %q", c.col, c.v, err, c.want)
		}
	}
}

func sinkTable(opts connector.Options, pk ...string) connector.Table {
	tbl := table(opts, types.Column{Name: "id", Type: types.BigInt}, types.Column{Name: "name", Type: types.String})
	tbl.PrimaryKey = pk
	return tbl
}

func TestCreateSink(t *testing.T) {
	// Creating a sink does not connect.
	s, err := New().CreateSink(sinkTable(nil, "id"), connector.Env{})
	if err != nil {
		t.Fatal(err)
	}
	sk := s.(*Sink)
	if !sk.Upsert() || sk.cfg.sink != (sinkSettings{maxRows: 100, interval: time.Second, maxRetries: 3, exactlyOnce: true}) {
		t.Errorf("defaults: upsert %v, %+v", sk.Upsert(), sk.cfg.sink)
	}
	if err := s.Close(); err != nil { // nothing written: nothing to do
		t.Fatal(err)
	}
	s, err = New().CreateSink(sinkTable(connector.Options{"sink.buffer-flush.max-rows": "0", "sink.buffer-flush.interval": "0",
		"sink.max-retries": "0", "sink.parallelism": "2", "lookup.cache": "PARTIAL", "lookup.partial-cache.max-rows": "10"}), connector.Env{})
	if err != nil {
		t.Fatal(err)
	}
	if sk := s.(*Sink); sk.Upsert() || sk.cfg.sink != (sinkSettings{}) {
		t.Errorf("append, no limits: upsert %v, %+v", sk.Upsert(), sk.cfg.sink)
	}
	s.Close()
	if !New().AcceptsChangelog(sinkTable(nil, "id"), connector.Env{}) || New().AcceptsChangelog(sinkTable(nil), connector.Env{}) {
		t.Error("AcceptsChangelog: a table takes updates if and only if it has a primary key")
	}
	for _, c := range []struct {
		opts connector.Options
		pk   []string
		want string
	}{
		{connector.Options{"sink.buffer-flush.max-rows": "-1"}, nil, "'sink.buffer-flush.max-rows' must be 0 (no limit) or a number of rows"},
		{connector.Options{"sink.buffer-flush.interval": "soon"}, nil, "option 'sink.buffer-flush.interval'"},
		{connector.Options{"sink.max-retries": "x"}, nil, "option 'sink.max-retries': cannot parse"},
		{connector.Options{"sink.parallelism": "0"}, nil, "'sink.parallelism' must be at least 1"},
		{connector.Options{"sink.buffer-flush.max-row": "1"}, nil, `unsupported option 'sink.buffer-flush.max-row'`},
		{nil, []string{"nope"}, "primary key column 'nope' is not a physical column"},
		{connector.Options{"sink.delivery-guarantee": "exactly-once"}, nil, "'sink.delivery-guarantee' = 'exactly-once' needs a PRIMARY KEY"},
		{connector.Options{"sink.delivery-guarantee": "none"}, []string{"id"}, "unsupported value 'none'"},
	} {
		_, err := New().CreateSink(sinkTable(c.opts, c.pk...), connector.Env{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v %v: %v, want %q", c.opts, c.pk, err, c.want)
		}
	}
}

func batch(kind types.RowKind, id int64, name types.Value) *types.Batch {
	b := types.NewBatch(1, 2)
	vals := b.AddRow(kind, types.NoOrigin, 2)
	vals[0], vals[1] = types.BigIntValue(id), name
	if id < 0 {
		vals[0] = types.NullValue
	}
	return b
}

// TestSinkRows checks what the sink buffers, by row kind, before anything
// is written (no flush: no database).
func TestSinkRows(t *testing.T) {
	ctx := context.Background()
	opts := connector.Options{"sink.buffer-flush.max-rows": "0", "sink.buffer-flush.interval": "0"}
	s, err := New().CreateSink(sinkTable(opts, "id"), connector.Env{})
	if err != nil {
		t.Fatal(err)
	}
	sk := s.(*Sink)
	for _, b := range []*types.Batch{
		batch(types.Insert, 1, types.StringValue("a")),
		batch(types.UpdateBefore, 1, types.StringValue("a")), // skipped
		batch(types.UpdateAfter, 1, types.StringValue("b")),  // replaces 1
		batch(types.Insert, 2, types.StringValue("c")),
		batch(types.Delete, 2, types.StringValue("c")), // replaces 2
	} {
		if err := s.Write(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	if n := sk.buf.Pending(); n != 2 {
		t.Errorf("%d changes buffered, want 2 (one per key)", n)
	}
	if err := s.Write(ctx, batch(types.Insert, -1, types.StringValue("x"))); err == nil ||
		!strings.Contains(err.Error(), "jdbc table 'dim': primary key column 'id' is NULL in a +I row") {
		t.Errorf("a NULL key: %v", err)
	}

	a, err := New().CreateSink(sinkTable(opts), connector.Env{})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Write(ctx, batch(types.Insert, 1, types.NullValue)); err != nil {
		t.Fatal(err)
	}
	if err := a.Write(ctx, batch(types.Delete, 1, types.NullValue)); err == nil ||
		!strings.Contains(err.Error(), "jdbc table 'dim' has no PRIMARY KEY and takes inserts only (got a -D row)") {
		t.Errorf("a delete into an append sink: %v", err)
	}
}

// TestSinkUnreachable: a database that is not there fails a flush with an
// error that names the table and is tried again ('sink.max-retries'),
// once a second later, then sticks; no password is quoted.
func TestSinkUnreachable(t *testing.T) {
	const pw = "hunter2-pw"
	for _, url := range []string{
		"jdbc:postgresql://127.0.0.1:1/db?connectTimeout=1",
		"jdbc:mysql://127.0.0.1:1/db?connectTimeout=1000",
	} {
		var logged []string
		env := connector.Env{Logf: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }}
		s, err := New().CreateSink(sinkTable(connector.Options{"url": url, "password": pw, "sink.max-retries": "1", "sink.buffer-flush.interval": "0"}, "id"), env)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Write(t.Context(), batch(types.Insert, 1, types.StringValue("a"))); err != nil {
			t.Fatal(err)
		}
		err = s.Flush(t.Context())
		if err == nil || !strings.Contains(err.Error(), "jdbc table 'dim'") || !strings.Contains(err.Error(), "after 1 retries") || strings.Contains(err.Error(), pw) {
			t.Errorf("%s: %v", url, err)
		}
		if len(logged) != 1 || !strings.Contains(logged[0], "retry 1 of 1") {
			t.Errorf("%s: logged %q", url, logged)
		}
		if err2 := s.Write(t.Context(), batch(types.Insert, 2, types.StringValue("b"))); err2 == nil || err2.Error() != err.Error() {
			t.Errorf("%s: a write after the error: %v", url, err2)
		}
		if err2 := s.Close(); err2 == nil {
			t.Errorf("%s: Close after the error: nil", url)
		}
	}
}
