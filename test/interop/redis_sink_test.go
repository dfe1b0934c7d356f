package interop_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/builtin"
	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/types"
)

// TestRedisSink writes updating queries into the machine's Redis through
// the redis sink (an aggregate as hashes, an aggregate of an aggregate
// whose rows come and go as plain strings, a Top-N with deletes as JSON
// strings with a TTL), compares every key under the prefix with the
// result computed from the input, and then looks the aggregate up in a
// lookup join through the very table the sink wrote.
func TestRedisSink(t *testing.T) {
	t.Run("at least once", func(t *testing.T) { testRedisSink(t, false) })
	t.Run("exactly-once", func(t *testing.T) { testRedisSink(t, true) })
}

// testRedisSink runs the queries once, in a job without checkpoints (the
// sinks write as their buffers fill) or in one that keeps its state in a
// 'state.dir' (the sinks write at each completed checkpoint).
func testRedisSink(t *testing.T, checkpointed bool) {
	addr := os.Getenv("SLUICE_REDIS_ADDR")
	if addr == "" {
		t.Skip("set SLUICE_REDIS_ADDR (e.g. 127.0.0.1:6379) to test the redis connector against Redis")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rc := goredis.NewClient(&goredis.Options{Addr: addr})
	t.Cleanup(func() { rc.Close() })
	prefix := fmt.Sprintf("sluice-sink-%d:", time.Now().UnixNano())
	t.Cleanup(func() {
		keys, _ := rc.Keys(context.Background(), prefix+"*").Result()
		if len(keys) > 0 {
			rc.Del(context.Background(), keys...)
		}
	})

	ev := genSinkEvents(2, 3000)
	path := writeSinkEvents(t, ev)
	ddl := fmt.Sprintf(`
CREATE TABLE events (id BIGINT, k INT, x STRING, v INT) WITH ('connector' = 'filesystem', 'path' = '%[1]s', 'format' = 'json');
CREATE TABLE agg (x STRING, n BIGINT, s BIGINT, hi INT, PRIMARY KEY (x) NOT ENFORCED)
  WITH ('connector' = 'redis', 'url' = 'redis://%[2]s', 'key-prefix' = '%[3]sagg:', 'sink.buffer-flush.max-rows' = '5');
CREATE TABLE hist (n BIGINT, `+"`keys`"+` BIGINT, PRIMARY KEY (n) NOT ENFORCED)
  WITH ('connector' = 'redis', 'url' = 'redis://%[2]s', 'key-prefix' = '%[3]shist:', 'data-type' = 'string');
CREATE TABLE top3 (x STRING, id BIGINT, v INT, PRIMARY KEY (x, id) NOT ENFORCED)
  WITH ('connector' = 'redis', 'url' = 'redis://%[2]s', 'key-prefix' = '%[3]stop:', 'key-separator' = '/',
        'data-type' = 'string', 'format' = 'json', 'sink.ttl' = '1 h', 'sink.buffer-flush.max-rows' = '2');
`, path, addr, prefix)
	set := ""
	if checkpointed {
		set = fmt.Sprintf("SET 'state.dir' = '%s';\nSET 'execution.checkpointing.interval' = '10ms';\n", t.TempDir())
	}
	e := openEngine(t)
	finish(t, e.start(t, set+ddl+`EXECUTE STATEMENT SET BEGIN
INSERT INTO agg SELECT x, COUNT(*), SUM(v), MAX(v) FROM events GROUP BY x;
INSERT INTO hist SELECT n, COUNT(*) FROM (SELECT k, COUNT(*) AS n FROM events GROUP BY k) g GROUP BY n;
INSERT INTO top3 SELECT x, id, v FROM (
  SELECT x, id, v, ROW_NUMBER() OVER (PARTITION BY x ORDER BY v DESC, id) AS rn FROM events) t WHERE rn <= 3;
END;`), false)

	// Every key under the prefix, as "key => value".
	keys, err := rc.Keys(ctx, prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, k := range keys {
		short := strings.TrimPrefix(k, prefix)
		switch {
		case strings.HasPrefix(short, "agg:"):
			h, err := rc.HGetAll(ctx, k).Result()
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprintf("%s => %s|%s|%s|%s", short, h["x"], h["n"], h["s"], h["hi"]))
		default:
			v, err := rc.Get(ctx, k).Result()
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprintf("%s => %s", short, v))
			if strings.HasPrefix(short, "top:") {
				if ttl := rc.TTL(ctx, k).Val(); ttl <= 0 || ttl > time.Hour {
					t.Errorf("%s: TTL %v, want up to an hour", short, ttl)
				}
			}
		}
	}
	sort.Strings(got)
	var want []string
	for _, r := range sinkQueries[0].want(ev) { // agg: x|n|s|hi
		x, _, _ := strings.Cut(r, "|")
		want = append(want, fmt.Sprintf("agg:%s => %s", x, r))
	}
	for _, r := range sinkQueries[1].want(ev) { // hist: n|keys
		n, c, _ := strings.Cut(r, "|")
		want = append(want, fmt.Sprintf("hist:%s => %s", n, c))
	}
	for _, r := range topN(ev, false) { // x|id|v
		f := strings.Split(r, "|")
		want = append(want, fmt.Sprintf(`top:%s/%s => {"x":"%s","id":%s,"v":%s}`, f[0], f[1], f[0], f[1], f[2]))
	}
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("Redis holds (%d keys):\n%s\nwant (%d keys):\n%s", len(got), strings.Join(got, "\n"), len(want), strings.Join(want, "\n"))
	}
	t.Logf("%d keys, as computed", len(got))

	// The table the sink wrote, looked up by the same DDL.
	probe := filepath.Join(t.TempDir(), "probe.jsonl")
	if err := os.WriteFile(probe, []byte(`{"o":1,"x":"a"}`+"\n"+`{"o":2,"x":"zz"}`+"\n"+`{"o":3,"x":"c"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rows := runSluice(t, ddl+fmt.Sprintf(`
CREATE TABLE probe (o INT, x STRING, pt AS PROCTIME()) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
SELECT p.o, a.n, a.hi FROM probe p LEFT JOIN agg FOR SYSTEM_TIME AS OF p.pt AS a ON p.x = a.x`, probe))
	wantRows := map[string]int{"[2, null, null]": 1}
	for _, r := range sinkQueries[0].want(ev) {
		f := strings.Split(r, "|")
		if o := slices.Index([]string{"a", "", "c"}, f[0]); o >= 0 {
			wantRows[fmt.Sprintf("[%d, %s, %s]", o+1, f[1], f[3])] = 1
		}
	}
	if d := diff(wantRows, rows); d != "" {
		t.Errorf("the lookup join through the written table:\n%s", d)
	}
}

// BenchmarkRedisSink upserts 100,000 rows over 10,000 keys as hashes
// through the sink, at least once, with 'sink.buffer-flush.max-rows' of
// 100 and 1,000. It reports rows written per second.
//
//	SLUICE_REDIS_ADDR=127.0.0.1:6379 go test ./test/interop -run '^$' -bench RedisSink -benchtime 3x
func BenchmarkRedisSink(b *testing.B) {
	addr := os.Getenv("SLUICE_REDIS_ADDR")
	if addr == "" {
		b.Skip("set SLUICE_REDIS_ADDR (e.g. 127.0.0.1:6379)")
	}
	const rows, keys = 100_000, 10_000
	prefix := fmt.Sprintf("sluice-bench-%d:", time.Now().UnixNano())
	rc := goredis.NewClient(&goredis.Options{Addr: addr})
	b.Cleanup(func() {
		keys, _ := rc.Keys(context.Background(), prefix+"*").Result()
		for len(keys) > 0 {
			n := min(1000, len(keys))
			rc.Del(context.Background(), keys[:n]...)
			keys = keys[n:]
		}
		rc.Close()
	})
	schema := types.NewSchema(types.Column{Name: "id", Type: types.BigInt}, types.Column{Name: "name", Type: types.String},
		types.Column{Name: "n", Type: types.BigInt}, types.Column{Name: "price", Type: types.Decimal(10, 2)})
	batches := make([]*types.Batch, 0, rows/1000)
	for i := 0; i < rows; i += 1000 {
		bt := types.NewBatch(1000, 4)
		for j := i; j < i+1000; j++ {
			v := bt.AddRow(types.Insert, types.NoOrigin, 4)
			v[0], v[1], v[2], v[3] = types.BigIntValue(int64(j%keys)), types.StringValue(fmt.Sprintf("name %d", j)), types.BigIntValue(int64(j)), types.DecimalValue(int64(j), 2)
		}
		batches = append(batches, bt)
	}
	conns, formats := connector.NewRegistry(), format.NewRegistry()
	if err := builtin.Register(conns, formats); err != nil {
		b.Fatal(err)
	}
	for _, maxRows := range []string{"100", "1000"} {
		b.Run("max-rows="+maxRows, func(b *testing.B) {
			tbl := connector.Table{Name: "bench", Schema: schema, PrimaryKey: []string{"id"}, Options: connector.Options{
				"connector": "redis", "url": "redis://" + addr, "key-prefix": prefix, "sink.buffer-flush.max-rows": maxRows,
				"sink.buffer-flush.interval": "0"}}
			ctx := context.Background()
			b.ResetTimer()
			for range b.N {
				sink, err := conns.Sink(tbl, connector.Env{Formats: formats})
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
