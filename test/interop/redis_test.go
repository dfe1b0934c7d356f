package interop_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/builtin"
	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/connector/lookupcache"
	"github.com/sluicesql/sluice/types"
)

// TestRedis looks rows up in the machine's Redis through the redis
// connector: hashes by a composite primary key, JSON and plain strings,
// missing keys, a column beyond the key, and lookups from several
// goroutines through one cache.
func TestRedis(t *testing.T) {
	addr := os.Getenv("SLUICE_REDIS_ADDR")
	if addr == "" {
		t.Skip("set SLUICE_REDIS_ADDR (e.g. 127.0.0.1:6379) to test the redis connector against Redis")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rc := goredis.NewClient(&goredis.Options{Addr: addr})
	t.Cleanup(func() { rc.Close() })
	prefix := fmt.Sprintf("sluice-test-%d:", time.Now().UnixNano())
	t.Cleanup(func() {
		keys, _ := rc.Keys(context.Background(), prefix+"*").Result()
		if len(keys) > 0 {
			rc.Del(context.Background(), keys...)
		}
	})
	for i := range 50 {
		if err := rc.HSet(ctx, fmt.Sprintf("%sdev:site%d/%d", prefix, i%5, i),
			"model", fmt.Sprintf("m%d", i%3), "weight", fmt.Sprintf("%d.%02d", i, i), "online", i%2 == 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	rc.Set(ctx, prefix+"json:7", `{"name":"seven","tags":["a","b"],"born":"2020-02-29"}`, 0)
	rc.Set(ctx, prefix+"rate:EUR", "1.0825", 0)

	conns, formats := connector.NewRegistry(), format.NewRegistry()
	if err := builtin.Register(conns, formats); err != nil {
		t.Fatal(err)
	}
	f, err := conns.Lookup("redis")
	if err != nil {
		t.Fatal(err)
	}
	env := connector.Env{Formats: formats}
	open := func(t *testing.T, schema types.Schema, pk []string, opts connector.Options) connector.KeyLookuper {
		t.Helper()
		o := connector.Options{"connector": "redis", "url": "redis://" + addr}
		for k, v := range opts {
			o[k] = v
		}
		src, err := f.(connector.LookupFactory).CreateLookup(connector.Table{Name: "dim", Schema: schema, PrimaryKey: pk, Options: o}, env)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { src.Close() })
		return src.(connector.KeyLookuper)
	}
	show := func(t *testing.T, l connector.KeyLookuper, s types.Schema, keyCols []int, key ...types.Value) string {
		t.Helper()
		rows, err := l.Lookup(ctx, keyCols, key, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range rows {
			parts := make([]string, len(r))
			for i, v := range r {
				parts[i] = types.FormatValue(v, s.Columns[i].Type)
			}
			out = append(out, strings.Join(parts, "|"))
		}
		return strings.Join(out, "\n")
	}

	devices := types.NewSchema(
		types.Column{Name: "site", Type: types.String},
		types.Column{Name: "id", Type: types.Int},
		types.Column{Name: "model", Type: types.String},
		types.Column{Name: "weight", Type: types.Decimal(6, 2)},
		types.Column{Name: "online", Type: types.Boolean},
	)
	t.Run("hash", func(t *testing.T) {
		l := open(t, devices, []string{"site", "id"}, connector.Options{"key-prefix": prefix + "dev:", "key-separator": "/",
			"lookup.cache": "PARTIAL", "lookup.partial-cache.max-rows": "20"})
		if got, want := show(t, l, devices, []int{0, 1}, types.StringValue("site2"), types.BigIntValue(12)), "site2|12|m0|12.12|TRUE"; got != want {
			t.Errorf("got %s, want %s", got, want)
		}
		if got := show(t, l, devices, []int{0, 1}, types.StringValue("site3"), types.BigIntValue(12)); got != "" {
			t.Errorf("missing key: %s", got)
		}
		if got, want := show(t, l, devices, []int{1, 0, 2}, types.Int32Value(13), types.StringValue("site3"), types.StringValue("m1")), "site3|13|m1|13.13|FALSE"; got != want {
			t.Errorf("got %s, want %s", got, want)
		}
		if got := show(t, l, devices, []int{1, 0, 2}, types.Int32Value(13), types.StringValue("site3"), types.StringValue("m2")); got != "" {
			t.Errorf("filtered: %s", got)
		}
		// Many goroutines, one cache bounded below the key count: every
		// other lookup is of one hot key, which stays cached.
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := range 200 {
					i := (n*7 + g) % 60
					if n%2 == 1 {
						i = 0
					}
					rows, err := l.Lookup(ctx, []int{0, 1}, []types.Value{types.StringValue(fmt.Sprintf("site%d", i%5)), types.Int32Value(int32(i))}, nil)
					if err != nil {
						t.Error(err)
						return
					}
					if want := i < 50; (len(rows) == 1) != want || want && rows[0][3].Unscaled() != int64(i*100+i) {
						t.Errorf("key %d: %v", i, rows)
						return
					}
				}
			}()
		}
		wg.Wait()
		st := l.(lookupcache.Cached).CacheStats()
		if st.Rows > 20 || st.Hits == 0 || st.Evictions == 0 {
			t.Errorf("cache stats %+v", st)
		}
	})
	t.Run("string", func(t *testing.T) {
		s := types.NewSchema(
			types.Column{Name: "id", Type: types.BigInt},
			types.Column{Name: "name", Type: types.String},
			types.Column{Name: "tags", Type: types.ArrayOf(types.String)},
			types.Column{Name: "born", Type: types.Date},
		)
		l := open(t, s, []string{"id"}, connector.Options{"data-type": "string", "format": "json", "key-prefix": prefix + "json:"})
		if got, want := show(t, l, s, []int{0}, types.BigIntValue(7)), "7|seven|[a, b]|2020-02-29"; got != want {
			t.Errorf("got %s, want %s", got, want)
		}
		if got := show(t, l, s, []int{0}, types.BigIntValue(8)); got != "" {
			t.Errorf("missing key: %s", got)
		}
		rates := types.NewSchema(types.Column{Name: "currency", Type: types.Char(3)}, types.Column{Name: "rate", Type: types.Decimal(10, 4)})
		l = open(t, rates, []string{"currency"}, connector.Options{"data-type": "string", "key-prefix": prefix + "rate:"})
		if got, want := show(t, l, rates, []int{0}, types.StringValue("EUR")), "EUR|1.0825"; got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	})
	// A batch is one pipeline: hashes, with a missing key, a key that
	// fails the column beyond the Redis key, and a repeated key; then GETs,
	// with a missing key. Each key finds what a Lookup of it finds.
	t.Run("batch", func(t *testing.T) {
		for _, c := range []struct {
			schema  types.Schema
			pk      []string
			opts    connector.Options
			keyCols []int
			keys    [][]types.Value
		}{
			{devices, []string{"site", "id"}, connector.Options{"key-prefix": prefix + "dev:", "key-separator": "/"}, []int{1, 0, 2}, [][]types.Value{
				{types.Int32Value(13), types.StringValue("site3"), types.StringValue("m1")},
				{types.Int32Value(12), types.StringValue("site3"), types.StringValue("m0")},
				{types.Int32Value(14), types.StringValue("site4"), types.StringValue("m1")}, // not m2: filtered
				{types.Int32Value(13), types.StringValue("site3"), types.StringValue("m1")},
				{types.Int32Value(40), types.StringValue("site0"), types.StringValue("m1")},
			}},
			{types.NewSchema(types.Column{Name: "currency", Type: types.Char(3)}, types.Column{Name: "rate", Type: types.Decimal(10, 4)}),
				[]string{"currency"}, connector.Options{"data-type": "string", "key-prefix": prefix + "rate:"}, []int{0},
				[][]types.Value{{types.StringValue("USD")}, {types.StringValue("EUR")}}},
		} {
			one := open(t, c.schema, c.pk, c.opts)
			batch := open(t, c.schema, c.pk, c.opts).(connector.BatchKeyLookuper)
			got := make([][]string, len(c.keys))
			if err := batch.LookupBatch(ctx, c.keyCols, c.keys, func(i int, r []types.Value) bool {
				parts := make([]string, len(r))
				for j, v := range r {
					parts[j] = types.FormatValue(v, c.schema.Columns[j].Type)
				}
				got[i] = append(got[i], strings.Join(parts, "|"))
				return true
			}); err != nil {
				t.Fatal(err)
			}
			found := 0
			for i, key := range c.keys {
				if want := show(t, one, c.schema, c.keyCols, key...); strings.Join(got[i], "\n") != want {
					t.Errorf("key %v: batch found %q, Lookup %q", key, got[i], want)
				}
				found += len(got[i])
			}
			if found == 0 || found == len(c.keys) {
				t.Errorf("%d of %d keys found: the batch should mix hits and misses", found, len(c.keys))
			}
			if st := batch.(lookupcache.Cached).CacheStats(); st.Fetches != 1 {
				t.Errorf("%d round trips for a batch, want 1", st.Fetches)
			}
		}
	})
}
