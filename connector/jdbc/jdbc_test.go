package jdbc

import (
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/lookupcache"
	"github.com/sluicesql/sluice/types"
)

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		url, user, password string
		d                   dialect
		dsn                 string
	}{
		{"jdbc:postgresql://127.0.0.1:5432/test", "postgres", "", postgres,
			"postgres://postgres@127.0.0.1:5432/test?connect_timeout=60&sslmode=prefer"},
		{"jdbc:postgresql://db.example/shop?sslmode=disable&currentSchema=dim", "u", "p@ss", postgres,
			"postgres://u:p%40ss@db.example:5432/shop?connect_timeout=60&search_path=dim&sslmode=disable"},
		{"jdbc:postgresql://[::1]:6000/x?user=a&password=b&connectTimeout=5", "", "", postgres,
			"postgres://a:b@[::1]:6000/x?connect_timeout=5&sslmode=prefer"},
		{"jdbc:mysql://127.0.0.1:3306/test", "root", "", mySQL,
			"root@tcp(127.0.0.1:3306)/test?parseTime=true&timeout=1m0s&time_zone=%27%2B00%3A00%27"},
		{"jdbc:mariadb://h/d?useSSL=false&characterEncoding=utf8", "u", "pw", mySQL,
			"u:pw@tcp(h:3306)/d?parseTime=true&timeout=1m0s&tls=false&time_zone=%27%2B00%3A00%27"},
		{"jdbc:mysql://h:1/d?connectTimeout=1500&user=x", "", "", mySQL,
			"x@tcp(h:1)/d?parseTime=true&timeout=1.5s&time_zone=%27%2B00%3A00%27"},
		// ssl=true is verify-full in PostgreSQL's JDBC driver (not libpq's
		// require); sslmode wins over it.
		{"jdbc:postgresql://h/d?ssl=true", "u", "", postgres,
			"postgres://u@h:5432/d?connect_timeout=60&sslmode=verify-full"},
		{"jdbc:postgresql://h/d?ssl", "u", "", postgres,
			"postgres://u@h:5432/d?connect_timeout=60&sslmode=verify-full"},
		{"jdbc:postgresql://h/d?ssl=true&sslmode=require", "u", "", postgres,
			"postgres://u@h:5432/d?connect_timeout=60&sslmode=require"},
		{"jdbc:postgresql://h/d?ssl=false", "u", "", postgres,
			"postgres://u@h:5432/d?connect_timeout=60&sslmode=prefer"},
		// sslMode wins over useSSL, as in MySQL's JDBC driver (useSSL,
		// read after it, once turned TLS off here).
		{"jdbc:mysql://h/d?sslMode=VERIFY_IDENTITY&useSSL=false", "u", "", mySQL,
			"u@tcp(h:3306)/d?parseTime=true&timeout=1m0s&tls=true&time_zone=%27%2B00%3A00%27"},
		{"jdbc:mysql://h/d?useSSL=YES&useUnicode=true&characterEncoding=UTF-8", "u", "", mySQL,
			"u@tcp(h:3306)/d?parseTime=true&timeout=1m0s&tls=preferred&time_zone=%27%2B00%3A00%27"},
	} {
		got, err := parseURL(tc.url, tc.user, tc.password, time.Minute)
		if err != nil {
			t.Errorf("%s: %v", tc.url, err)
			continue
		}
		if got.dialect != tc.d || got.dsn != tc.dsn {
			t.Errorf("%s:\n got %v %s\nwant %v %s", tc.url, got.dialect, got.dsn, tc.d, tc.dsn)
		}
		if got.dialect == mySQL {
			if cfg, err := mysql.ParseDSN(got.dsn); err != nil || !cfg.ParseTime || cfg.Params["time_zone"] != "'+00:00'" {
				t.Errorf("%s: the DSN does not parse back: %v %+v", tc.url, err, cfg)
			}
		}
	}
	for _, bad := range []string{
		"postgresql://h/db",              // not JDBC
		"jdbc:oracle:thin:@h:1521:xe",    // unsupported database
		"jdbc:postgresql://h1,h2/db",     // several hosts
		"jdbc:postgresql://h/",           // no database
		"jdbc:postgresql://h/db?foo=bar", // unknown parameter
		"jdbc:mysql://h/db?allowMultiQueries=true",
		"jdbc:mysql://h/db?connectTimeout=soon",
	} {
		if _, err := parseURL(bad, "", "", 0); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	// Parameters with values the drivers would not take, or that cannot
	// be honoured, are refused, naming them; none is ignored.
	for bad, want := range map[string]string{
		"jdbc:postgresql://h/db?sslMode=require":                 `unsupported parameter 'sslMode' (did you mean "sslmode"?) (supported: user, password, sslmode, ssl, connectTimeout, ApplicationName, currentSchema)`,
		"jdbc:postgresql://h/db?sslmode=verify_full":             "unsupported sslmode 'verify_full' (expected disable, allow, prefer, require, verify-ca, verify-full)",
		"jdbc:postgresql://h/db?ssl=yes":                         "parameter ssl=yes must be true or false",
		"jdbc:postgresql://h/db?connectTimeout=5s":               "connectTimeout=5s is not a whole number of seconds",
		"jdbc:postgresql://h/db?connectTimeout=-1":               "connectTimeout=-1 is not a whole number of seconds",
		"jdbc:postgresql://h/db?sslmode=disable&sslmode=require": "parameter 'sslmode' is given 2 times",
		"jdbc:mysql://h/db?useSSL=on":                            "parameter useSSL=on must be true or false",
		"jdbc:mysql://h/db?connectTimeout=-5":                    `connectTimeout "-5" is not a whole number of milliseconds`,
		"jdbc:mysql://h/db?connectTimeout=1500ms":                `connectTimeout "1500ms" is not a whole number of milliseconds`,
		"jdbc:mysql://h/db?characterEncoding=latin1":             "characterEncoding=latin1 is not supported: the connection speaks UTF-8 (utf8mb4)",
		"jdbc:mysql://h/db?useUnicode=false":                     "useUnicode=false is not supported",
		"jdbc:mysql://h/db?usessl=true":                          `unsupported parameter 'usessl' (did you mean "useSSL"?)`,
		"jdbc:mariadb://h/db?sslMode=REQUIRED&sslMode=DISABLED":  "parameter 'sslMode' is given 2 times",
	} {
		_, err := parseURL(bad, "", "", 0)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v\nwant %s", bad, err, want)
		}
	}
}

func TestSelectSQL(t *testing.T) {
	cols := []string{"id", "name", "we\"ird`"}
	if got, want := postgres.selectSQL("dim.users", cols, nil), `SELECT "id", "name", "we""ird`+"`"+`" FROM "dim"."users"`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got, want := postgres.selectSQL("users", cols[:2], []string{"id", "name"}), `SELECT "id", "name" FROM "users" WHERE "id" = $1 AND "name" = $2`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got, want := mySQL.selectSQL("users", cols, []string{"name"}), "SELECT `id`, `name`, `we\"ird``` FROM `users` WHERE `name` = ?"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// A batch: a SELECT per key, led by its position, parameters key
	// after key.
	if got, want := postgres.batchSQL("users", cols[:2], []string{"id", "name"}, 2),
		`SELECT 0, "id", "name" FROM "users" WHERE "id" = $1 AND "name" = $2 UNION ALL SELECT 1, "id", "name" FROM "users" WHERE "id" = $3 AND "name" = $4`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got, want := mySQL.batchSQL("users", cols[:2], []string{"id"}, 3),
		"SELECT 0, `id`, `name` FROM `users` WHERE `id` = ? UNION ALL SELECT 1, `id`, `name` FROM `users` WHERE `id` = ? UNION ALL SELECT 2, `id`, `name` FROM `users` WHERE `id` = ?"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestCheckColumn(t *testing.T) {
	ok := []struct {
		db string
		t  types.Type
	}{
		{"INT4", types.Int}, {"INT8", types.BigInt}, {"UNSIGNED INT", types.BigInt}, {"TINYINT", types.Boolean},
		{"NUMERIC", types.Decimal(10, 2)}, {"DECIMAL", types.Double}, {"FLOAT8", types.Double},
		{"TEXT", types.String}, {"BPCHAR", types.Char(3)}, {"UUID", types.String}, {"JSONB", types.String},
		{"BYTEA", types.Bytes}, {"BLOB", types.String}, {"BOOL", types.Boolean}, {"DATE", types.Date},
		{"TIME", types.Time(0)}, {"TIMESTAMPTZ", types.TimestampLTZ(3)}, {"DATETIME", types.Timestamp(6)},
	}
	for _, c := range ok {
		if err := checkColumn("c", c.db, c.t); err != nil {
			t.Errorf("%s as %s: %v", c.db, c.t, err)
		}
	}
	bad := []struct {
		db   string
		t    types.Type
		want string
	}{
		{"TEXT", types.Int, "column 'c' is TEXT (string) in the database and cannot be read as INT; declare it as STRING"},
		{"FLOAT8", types.Decimal(10, 2), "declare it as FLOAT or DOUBLE"},
		{"TIMESTAMP", types.Date, "declare it as TIMESTAMP(p) or TIMESTAMP_LTZ(p)"},
		{"INTERVAL", types.String, "column 'c' has database type INTERVAL, which the jdbc connector cannot read"},
	}
	for _, c := range bad {
		err := checkColumn("c", c.db, c.t)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s as %s: %v, want %q", c.db, c.t, err, c.want)
		}
	}
}

func TestConvert(t *testing.T) {
	utc := time.Date(2024, 2, 29, 13, 14, 15, 123456789, time.UTC)
	for _, c := range []struct {
		src  any
		t    types.Type
		want string
	}{
		{nil, types.Int, "NULL"},
		{int64(42), types.TinyInt, "42"},
		{[]byte("42"), types.BigInt, "42"},
		{"12.000", types.Int, "12"},
		{uint64(7), types.BigInt, "7"},
		{int64(1), types.Boolean, "TRUE"},
		{[]byte{0}, types.Boolean, "FALSE"},
		{true, types.Boolean, "TRUE"},
		{float64(1.5), types.Double, "1.5"},
		{[]byte("2.25"), types.Float, "2.25"},
		{"123.45", types.Decimal(5, 2), "123.45"},
		{"123.4", types.Decimal(6, 2), "123.40"},
		{int64(9), types.Decimal(3, 1), "9.0"},
		{[]byte("abc"), types.String, "abc"},
		{"ab ", types.Char(3), "ab "},
		{[]byte{1, 2}, types.Bytes, "x'0102'"},
		{utc, types.Date, "2024-02-29"},
		{"2024-02-29", types.Date, "2024-02-29"},
		{"13:14:15.5", types.Time(3), "13:14:15.500"},
		{utc, types.Timestamp(3), "2024-02-29 13:14:15.123"},
		{utc.In(time.FixedZone("x", 3600)), types.TimestampLTZ(6), "2024-02-29 13:14:15.123456"},
		{"2024-02-29 13:14:15", types.Timestamp(0), "2024-02-29 13:14:15"},
	} {
		v, err := convert(c.src, c.t)
		if err != nil {
			t.Errorf("%v as %s: %v", c.src, c.t, err)
			continue
		}
		if got := types.FormatValue(v, c.t); got != c.want {
			t.Errorf("%v as %s: %s, want %s", c.src, c.t, got, c.want)
		}
		if !v.IsNull() && types.KeyKind(v.Kind()) != types.KeyKind(c.t.Kind) {
			t.Errorf("%v as %s: kind %s", c.src, c.t, v.Kind())
		}
	}
	for _, c := range []struct {
		src any
		t   types.Type
	}{
		{int64(300), types.TinyInt},
		{"1.5", types.Int},
		{"123.456", types.Decimal(5, 2)},
		{"12345.6", types.Decimal(5, 2)},
		{int64(2), types.Boolean},
		{"x", types.Double},
		{"not a date", types.Date},
		{uint64(1 << 63), types.BigInt},
	} {
		if v, err := convert(c.src, c.t); err == nil {
			t.Errorf("%v as %s: %v, want an error", c.src, c.t, v)
		}
	}
}

func TestParam(t *testing.T) {
	for _, c := range []struct {
		v    types.Value
		want any
	}{
		{types.Int32Value(5), int64(5)},
		{types.StringValue("a"), "a"},
		{types.DecimalValue(1234, 2), "12.34"},
		{types.DateValue(types.DateFromCivil(2024, 1, 2)), time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)},
		{types.TimestampValue(1_000_000), time.Unix(1, 0).UTC()},
		{types.BoolValue(true), true},
	} {
		got, err := param(c.v)
		if err != nil || got != c.want {
			t.Errorf("param(%v) = %v, %v; want %v", c.v, got, err, c.want)
		}
	}
}

func table(opts connector.Options, cols ...types.Column) connector.Table {
	if len(cols) == 0 {
		cols = []types.Column{{Name: "id", Type: types.BigInt}, {Name: "name", Type: types.String}}
	}
	o := connector.Options{"connector": "jdbc", "url": "jdbc:postgresql://127.0.0.1:5432/test", "table-name": "users", "username": "postgres", "password": "secret"}
	for k, v := range opts {
		o[k] = v
	}
	return connector.Table{Name: "dim", Schema: types.NewSchema(cols...), Options: o}
}

func TestCreateLookup(t *testing.T) {
	// Creating a source does not connect: these run without a database.
	src, err := New().CreateLookup(table(connector.Options{"lookup.cache": "FULL", "lookup.full-cache.reload-interval": "10 min"}), connector.Env{})
	if err != nil {
		t.Fatal(err)
	}
	full, ok := src.(*FullSource)
	if !ok {
		t.Fatalf("FULL gives %T", src)
	}
	if full.ReloadInterval() != 10*time.Minute || full.SQL() != `SELECT "id", "name" FROM "users"` {
		t.Errorf("full source: %v %s", full.ReloadInterval(), full.SQL())
	}
	if id := full.Identity(); strings.Contains(id, "secret") || !strings.Contains(id, "jdbc:postgresql://127.0.0.1:5432/test") || !strings.Contains(id, "users") || !strings.Contains(id, "postgres") {
		t.Errorf("identity %q", id)
	}
	full.Close()

	src, err = New().CreateLookup(table(connector.Options{"lookup.cache": "PARTIAL", "lookup.partial-cache.max-bytes": "1mb",
		"driver": "org.postgresql.Driver"}), connector.Env{})
	if err != nil {
		t.Fatal(err)
	}
	l, ok := src.(*Lookuper)
	if !ok {
		t.Fatalf("PARTIAL gives %T", src)
	}
	if got := l.SQL([]int{1, 0}); got != `SELECT "id", "name" FROM "users" WHERE "name" = $1 AND "id" = $2` {
		t.Errorf("lookup SQL %s", got)
	}
	if st := l.CacheStats(); st != (lookupcache.Stats{}) {
		t.Errorf("fresh stats %+v", st)
	}
	l.Close()

	for _, c := range []struct {
		opts connector.Options
		cols []types.Column
		want string
	}{
		{connector.Options{"table-name": ""}, nil, "missing required option 'table-name'"},
		{connector.Options{"lookup.cahce": "FULL"}, nil, `unsupported option 'lookup.cahce' (did you mean "lookup.cache"?)`},
		{connector.Options{"driver": "com.mysql.cj.jdbc.Driver"}, nil, "driver 'com.mysql.cj.jdbc.Driver' is for MySQL, but the url names PostgreSQL"},
		{connector.Options{"driver": "oracle.jdbc.OracleDriver"}, nil, "unknown driver"},
		{connector.Options{"lookup.cache": "PARTIAL"}, nil, "needs a bound"},
		{nil, []types.Column{{Name: "a", Type: types.ArrayOf(types.Int)}}, "cannot read columns of type ARRAY<INT>"},
	} {
		_, err := New().CreateLookup(table(c.opts, c.cols...), connector.Env{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.opts, err, c.want)
		}
	}
}

// TestSecretsMasked: no error quotes a password, whether it is in the
// URL's user info, in its parameters or in the 'password' option, at
// creation or when the database cannot be reached.
func TestSecretsMasked(t *testing.T) {
	const pw = "hunter2-pw"
	for _, url := range []string{
		"jdbc:postgresql://h/db?password=" + pw + "&foo=bar",       // unknown parameter
		"jdbc:oracle://scott:" + pw + "@h:1521/xe",                 // unsupported database
		"jdbc:mysql://h/db?user=u&password=" + pw + "&sslMode=odd", // unsupported sslMode
		"jdbc:mysql://u:" + pw + "@h:port/db",                      // url.Parse fails
		"postgresql://u:" + pw + "@h/db",                           // not JDBC
	} {
		_, err := New().CreateLookup(table(connector.Options{"url": url}), connector.Env{})
		if err == nil {
			t.Errorf("%s: no error", url)
		} else if strings.Contains(err.Error(), pw) || !strings.Contains(err.Error(), "xxxxx") {
			t.Errorf("the error quotes the password or masks nothing: %v", err)
		}
	}
	// A database that is not there: the load's error says so, without the
	// password of the URL or of the option.
	for _, opts := range []connector.Options{
		{"url": "jdbc:postgresql://127.0.0.1:1/db?password=" + pw + "&connectTimeout=1"},
		{"url": "jdbc:postgresql://127.0.0.1:1/db?connectTimeout=1", "password": pw},
		{"url": "jdbc:mysql://127.0.0.1:1/db?password=" + pw + "&connectTimeout=1000"},
	} {
		opts["lookup.cache"] = "FULL"
		src, err := New().CreateLookup(table(opts), connector.Env{})
		if err != nil {
			t.Fatal(err)
		}
		err = src.(*FullSource).Load(t.Context(), func([]types.Value) error { return nil })
		src.Close()
		if err == nil || strings.Contains(err.Error(), pw) {
			t.Errorf("%s: %v", opts["url"], err)
		}
		if id := src.(*FullSource).Identity(); strings.Contains(id, pw) {
			t.Errorf("identity %q", id)
		}
	}
}
