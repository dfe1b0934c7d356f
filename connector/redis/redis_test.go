package redis

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/connector/format/json"
	"github.com/sluicesql/sluice/connector/lookupcache"
	"github.com/sluicesql/sluice/types"
)

var schema = types.NewSchema(
	types.Column{Name: "tenant", Type: types.String},
	types.Column{Name: "id", Type: types.BigInt},
	types.Column{Name: "name", Type: types.String},
	types.Column{Name: "score", Type: types.Decimal(5, 2)},
	types.Column{Name: "seen", Type: types.Timestamp(3)},
)

func env(now func() int64) connector.Env {
	f := format.NewRegistry()
	f.Register(json.New())
	return connector.Env{Formats: f, Now: now}
}

func open(t *testing.T, s types.Schema, pk []string, opts connector.Options, e connector.Env) *Lookuper {
	t.Helper()
	src, err := New().CreateLookup(connector.Table{Name: "dim", Schema: s, PrimaryKey: pk, Options: opts}, e)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src.(*Lookuper)
}

func lookup(t *testing.T, l *Lookuper, keyCols []int, key ...types.Value) string {
	t.Helper()
	rows, err := l.Lookup(context.Background(), keyCols, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rows {
		parts := make([]string, len(r))
		for i, v := range r {
			parts[i] = types.FormatValue(v, l.schema.Columns[i].Type)
		}
		out = append(out, strings.Join(parts, "|"))
	}
	return strings.Join(out, "\n")
}

func TestHash(t *testing.T) {
	mr := miniredis.RunT(t)
	mr.HSet("dim:acme:7", "name", "seven", "score", "1.5", "seen", "2024-01-02 03:04:05.678", "other", "ignored")
	mr.HSet("dim:acme:8", "name", "eight", "tenant", "acme")
	var now int64 = 1e15
	l := open(t, schema, []string{"tenant", "id"}, connector.Options{
		"connector": "redis", "host": mr.Host(), "port": mr.Port(), "key-prefix": "dim:",
		"lookup.cache": "PARTIAL", "lookup.partial-cache.max-rows": "10", "lookup.partial-cache.expire-after-write": "1 min",
	}, env(func() int64 { return now }))
	tenantID := []int{0, 1}
	if got, want := lookup(t, l, tenantID, types.StringValue("acme"), types.Int32Value(7)),
		"acme|7|seven|1.50|2024-01-02 03:04:05.678"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	// The key columns in another order; missing fields are NULL.
	if got, want := lookup(t, l, []int{1, 0}, types.BigIntValue(8), types.StringValue("acme")), "acme|8|eight|NULL|NULL"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if got := lookup(t, l, tenantID, types.StringValue("acme"), types.Int32Value(9)); got != "" {
		t.Errorf("missing key: %s", got)
	}
	// A column beyond the primary key is checked on the row.
	if got := lookup(t, l, []int{0, 1, 2}, types.StringValue("acme"), types.Int32Value(7), types.StringValue("other")); got != "" {
		t.Errorf("filtered: %s", got)
	}
	if got := lookup(t, l, []int{2, 0, 1}, types.StringValue("seven"), types.StringValue("acme"), types.Int32Value(7)); !strings.HasPrefix(got, "acme|7|seven|") {
		t.Errorf("filtered: %s", got)
	}
	// Cached: a change is not seen until the entry expires, and neither
	// is a key that appears.
	mr.HSet("dim:acme:7", "name", "SEVEN")
	mr.HSet("dim:acme:9", "name", "nine")
	if got := lookup(t, l, tenantID, types.StringValue("acme"), types.Int32Value(7)); !strings.Contains(got, "|seven|") {
		t.Errorf("not cached: %s", got)
	}
	if got := lookup(t, l, tenantID, types.StringValue("acme"), types.Int32Value(9)); got != "" {
		t.Errorf("missing key not cached: %s", got)
	}
	now += int64(time.Minute / time.Microsecond)
	if got := lookup(t, l, tenantID, types.StringValue("acme"), types.Int32Value(7)); !strings.Contains(got, "|SEVEN|") {
		t.Errorf("not expired: %s", got)
	}
	if got := lookup(t, l, tenantID, types.StringValue("acme"), types.Int32Value(9)); got != "acme|9|nine|NULL|NULL" {
		t.Errorf("missing key not expired: %s", got)
	}
	st := l.CacheStats()
	if st.Hits != 2 || st.Misses != 7 || st.Expirations != 2 {
		t.Errorf("stats %+v", st)
	}
	// Not by the primary key.
	if _, err := l.Lookup(context.Background(), []int{2}, []types.Value{types.StringValue("x")}, nil); err == nil ||
		!strings.Contains(err.Error(), "can only be looked up by its primary key (tenant, id)") {
		t.Errorf("error %v", err)
	}
	// A field that is not of its column's type.
	mr.HSet("dim:acme:10", "score", "lots")
	if _, err := l.Lookup(context.Background(), tenantID, []types.Value{types.StringValue("acme"), types.Int32Value(10)}, nil); err == nil ||
		!strings.Contains(err.Error(), "field 'score'") {
		t.Errorf("error %v", err)
	}
}

func TestHashWithoutPrimaryKey(t *testing.T) {
	mr := miniredis.RunT(t)
	mr.HSet("acme|7", "name", "seven")
	l := open(t, schema, nil, connector.Options{"connector": "redis", "url": "redis://" + mr.Addr() + "/0", "key-separator": "|"}, env(nil))
	// Without a primary key the lookup's key columns, in table order, make the key.
	if got, want := lookup(t, l, []int{1, 0}, types.Int32Value(7), types.StringValue("acme")), "acme|7|seven|NULL|NULL"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if st := l.CacheStats(); st != (lookupcache.Stats{Fetches: 1, Fetched: 1}) {
		t.Errorf("no cache, stats %+v; want a round trip for a key, nothing cached", st)
	}
}

func TestString(t *testing.T) {
	mr := miniredis.RunT(t)
	mr.Set("user:7", `{"name":"seven","score":2.25}`)
	mr.Set("user:8", `{"tenant":"x","id":8,"name":"eight"}`)
	mr.Set("user:9", `not json`)
	s := types.NewSchema(schema.Columns[1:4]...)
	l := open(t, s, []string{"id"}, connector.Options{"connector": "redis", "host": mr.Host(), "port": mr.Port(),
		"data-type": "string", "format": "json", "key-prefix": "user:", "lookup.max-retries": "0"}, env(nil))
	if got, want := lookup(t, l, []int{0}, types.BigIntValue(7)), "7|seven|2.25"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if got, want := lookup(t, l, []int{0}, types.BigIntValue(8)), "8|eight|NULL"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if got := lookup(t, l, []int{0}, types.BigIntValue(1)); got != "" {
		t.Errorf("missing: %s", got)
	}
	if _, err := l.Lookup(context.Background(), []int{0}, []types.Value{types.BigIntValue(9)}, nil); err == nil {
		t.Error("malformed value: no error")
	}

	// Without a format: the single value column.
	mr.Set("eu:7", "12.5")
	v := types.NewSchema(types.Column{Name: "region", Type: types.String}, types.Column{Name: "id", Type: types.Int},
		types.Column{Name: "rate", Type: types.Double})
	l = open(t, v, []string{"region", "id"}, connector.Options{"connector": "redis", "host": mr.Host(), "port": mr.Port(),
		"data-type": "string"}, env(nil))
	if got, want := lookup(t, l, []int{0, 1}, types.StringValue("eu"), types.BigIntValue(7)), "eu|7|12.5"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestServerDown(t *testing.T) {
	mr := miniredis.RunT(t)
	l := open(t, schema, []string{"tenant", "id"}, connector.Options{"connector": "redis", "host": mr.Host(), "port": mr.Port(),
		"lookup.max-retries": "1", "timeout": "200 ms"}, env(nil))
	mr.Close()
	_, err := l.Lookup(context.Background(), []int{0, 1}, []types.Value{types.StringValue("a"), types.BigIntValue(1)}, nil)
	if err == nil || !strings.Contains(err.Error(), "after 1 retries") {
		t.Errorf("error %v", err)
	}
}

func TestOptions(t *testing.T) {
	base := connector.Options{"connector": "redis", "host": "127.0.0.1"}
	for _, c := range []struct {
		opts connector.Options
		pk   []string
		want string
	}{
		{connector.Options{"host": ""}, nil, "missing required option 'host' (or 'url')"},
		{connector.Options{"url": "redis://127.0.0.1:1"}, nil, "either 'url' or 'host'"},
		{connector.Options{"data-type": "list"}, nil, "unsupported value 'list'"},
		{connector.Options{"data-type": "string"}, nil, "needs a PRIMARY KEY and exactly one other column"},
		{connector.Options{"format": "json"}, nil, "applies to 'data-type' = 'string' only"},
		{connector.Options{"lookup.cache": "FULL"}, nil, "'FULL' is not supported"},
		{connector.Options{"key-prefx": "a"}, nil, "unsupported option 'key-prefx'"},
		{connector.Options{"port": "70000"}, nil, "option 'port' must be a port from 1 to 65535, not 70000"},
		{connector.Options{"port": "0"}, nil, "option 'port' must be a port from 1 to 65535, not 0"},
		{connector.Options{"database": "-1"}, nil, "option 'database' must be a database number (0 or more), not -1"},
		{connector.Options{"database": "1x"}, nil, `option 'database': cannot parse "1x" as an integer`},
		{nil, []string{"nope"}, "primary key column 'nope'"},
	} {
		o := connector.Options{}
		for k, v := range base {
			o[k] = v
		}
		for k, v := range c.opts {
			o[k] = v
		}
		_, err := New().CreateLookup(connector.Table{Name: "d", Schema: schema, PrimaryKey: c.pk, Options: o}, env(nil))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.opts, err, c.want)
		}
	}
}

// TestBatch looks a batch up in one pipeline: hits, a missing key, a
// repeated key and a JSON value that does not parse (an error naming the
// key), and a server that went away.
func TestBatch(t *testing.T) {
	mr := miniredis.RunT(t)
	mr.HSet("t:acme:1", "name", "one", "score", "1.50")
	mr.HSet("t:acme:3", "name", "three")
	l := open(t, schema, []string{"tenant", "id"}, connector.Options{"connector": "redis", "url": "redis://" + mr.Addr() + "/0", "key-prefix": "t:"}, env(nil))
	k := func(id int64) []types.Value { return []types.Value{types.StringValue("acme"), types.BigIntValue(id)} }
	var got []string
	err := l.LookupBatch(context.Background(), []int{0, 1}, [][]types.Value{k(3), k(2), k(1), k(3)}, func(i int, row []types.Value) bool {
		got = append(got, fmt.Sprintf("%d:%s", i, row[2].Str()))
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if g := strings.Join(got, " "); g != "0:three 2:one 3:three" {
		t.Errorf("got %s", g)
	}
	if st := l.CacheStats(); st.Fetches != 1 || st.Fetched != 3 {
		t.Errorf("%d round trips for %d keys; want 1 for 3 (a repeat)", st.Fetches, st.Fetched)
	}
	mr.HSet("t:acme:4", "score", "not a number")
	err = l.LookupBatch(context.Background(), []int{0, 1}, [][]types.Value{k(1), k(4)}, func(int, []types.Value) bool { return true })
	if err == nil || !strings.Contains(err.Error(), "t:acme:4") {
		t.Errorf("a bad value: %v", err)
	}
	mr.Close()
	err = l.LookupBatch(context.Background(), []int{0, 1}, [][]types.Value{k(1), k(3)}, func(int, []types.Value) bool { return true })
	if err == nil || !strings.Contains(err.Error(), "HGETALL t:acme:1") {
		t.Errorf("a server gone: %v", err)
	}
}

// TestSecretsMasked: no error quotes the password of the URL or of the
// option.
func TestSecretsMasked(t *testing.T) {
	const pw = "hunter2-pw"
	for _, u := range []string{"redis://u:" + pw + "@127.0.0.1:port/0", "redis://:" + pw + "@127.0.0.1:6379/db7", "http://u:" + pw + "@h"} {
		_, err := New().CreateLookup(connector.Table{Name: "d", Schema: schema, Options: connector.Options{"connector": "redis", "url": u}}, env(nil))
		if err == nil || strings.Contains(err.Error(), pw) {
			t.Errorf("%s: %v", u, err)
		}
	}
	mr := miniredis.RunT(t)
	mr.RequireAuth("right-password")
	l := open(t, schema, []string{"tenant", "id"}, connector.Options{"connector": "redis", "host": mr.Host(), "port": mr.Port(),
		"password": pw, "lookup.max-retries": "0"}, env(nil))
	_, err := l.Lookup(context.Background(), []int{0, 1}, []types.Value{types.StringValue("a"), types.BigIntValue(1)}, nil)
	if err == nil || strings.Contains(err.Error(), pw) {
		t.Errorf("wrong password: %v", err)
	}
}
