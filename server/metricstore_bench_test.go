package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sluicesql/sluice/internal/bench"
	"github.com/sluicesql/sluice/metricstore"
	"github.com/sluicesql/sluice/types"
)

// benchGroup is a metric group of ten metrics of the usual kinds over one
// BIGINT key; its first metric is the time of the commit that set it, in
// microseconds, for the subscription benchmark's latencies.
func benchGroup() metricstore.Group {
	return metricstore.Group{Name: "accounts", Version: 1,
		Keys: []types.Column{{Name: "account_id", Type: types.BigInt}},
		Metrics: []metricstore.Metric{
			{Name: "committed_us", Type: types.BigInt},
			{Name: "logins_1m", Type: types.BigInt},
			{Name: "logins_1h", Type: types.BigInt},
			{Name: "failures_1h", Type: types.BigInt},
			{Name: "distinct_ips_1d", Type: types.BigInt},
			{Name: "amount_1h", Type: types.Decimal(18, 2)},
			{Name: "max_amount_1d", Type: types.Decimal(18, 2)},
			{Name: "avg_amount_1d", Type: types.Double},
			{Name: "failure_ratio_1h", Type: types.Double},
			{Name: "last_country", Type: types.String},
		}}
}

var countries = []string{"FR", "DE", "US", "JP", "BR", "IN", "NG", "GB"}

// benchChange is the change of one account.
func benchChange(rnd *rand.Rand, account int64, now time.Time) metricstore.Change {
	n := int64(rnd.IntN(1000))
	return metricstore.Change{Key: []types.Value{types.BigIntValue(account)}, EventTime: now.UnixMilli(), Values: []types.Value{
		types.BigIntValue(now.UnixMicro()), types.BigIntValue(n % 10), types.BigIntValue(n), types.BigIntValue(n / 7),
		types.BigIntValue(n % 50), types.DecimalValue(n*1234, 2), types.DecimalValue(n*999, 2), types.DoubleValue(float64(n) * 1.37),
		types.DoubleValue(float64(n%7) / 7), types.StringValue(countries[n%8]),
	}}
}

// loadAccounts commits accounts 0..n-1, 10,000 a commit.
func loadAccounts(tb testing.TB, ms *metricstore.Store, n int) {
	rnd := rand.New(rand.NewPCG(1, 2))
	now := time.Now()
	changes := make([]metricstore.Change, 0, 10000)
	for a := range int64(n) {
		changes = append(changes, benchChange(rnd, a, now))
		if len(changes) == cap(changes) || a == int64(n)-1 {
			if err := ms.Commit("accounts", changes); err != nil {
				tb.Fatal(err)
			}
			changes = changes[:0]
		}
	}
}

// benchServer starts a server on a loopback port for a benchmark.
func benchServer(b *testing.B, memory int64) (*Server, string) {
	s, err := New(Config{DataDir: b.TempDir(), MetricStoreMemory: memory, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go s.Serve(ln)
	return s, "http://" + ln.Addr().String()
}

func envInt(b *testing.B, name string, def int) int {
	if s := os.Getenv(name); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			b.Fatal(err)
		}
		return n
	}
	return def
}

func reportLatencies(b *testing.B, lat []time.Duration, prefix string) {
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(lat[len(lat)/2]), prefix+"p50-ms")
	b.ReportMetric(ms(lat[len(lat)*99/100]), prefix+"p99-ms")
	b.ReportMetric(ms(lat[len(lat)-1]), prefix+"max-ms")
}

// BenchmarkMetricStoreRead reads 1,000 random keys × the 10 metrics of a
// group of SLUICE_METRIC_KEYS keys (default 1,000,000) through
// POST /v1/metric-groups/{name}/read on a server on a loopback port,
// SLUICE_METRIC_READS times (default 2,000) from one client, and reports
// the latencies of the whole round trip (the request sent, the answer
// read whole, not decoded) and the server's own time (server-*: from its
// handler's start to the answer handed to the connection): idle, and
// while 1,000 changes are committed every 100 ms. The direct
// sub-benchmark is the store's ReadJSON alone, without HTTP:
//
//	go test ./server -run '^$' -bench MetricStoreRead -benchtime 1x
func BenchmarkMetricStoreRead(b *testing.B) {
	keys := envInt(b, "SLUICE_METRIC_KEYS", 1_000_000)
	reads := envInt(b, "SLUICE_METRIC_READS", 2000)
	s, err := New(Config{DataDir: b.TempDir(), MetricStoreMemory: 4 << 30, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	// The server's own time for each read: from its handler's start to
	// the answer handed to the connection.
	var serverMu sync.Mutex
	var serverLat []time.Duration
	h := s.Handler()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t0 := time.Now()
		h.ServeHTTP(w, r)
		d := time.Since(t0)
		serverMu.Lock()
		serverLat = append(serverLat, d)
		serverMu.Unlock()
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()
	url := "http://" + ln.Addr().String()
	serverTimes := func() []time.Duration {
		serverMu.Lock()
		defer serverMu.Unlock()
		out := serverLat
		serverLat = nil
		return out
	}
	ms := s.MetricStore()
	if err := ms.Define(benchGroup()); err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	loadAccounts(b, ms, keys)
	runtime.GC()
	var mem runtime.MemStats
	runtime.ReadMemStats(&mem)
	b.Logf("%d keys loaded in %v: %+v; Go heap in use %d MiB", keys, time.Since(t0), ms.Stats(), mem.HeapInuse>>20)
	rnd := rand.New(rand.NewPCG(3, 4))
	bodies := make([][]byte, 64)
	for i := range bodies {
		ks := make([][]int64, 1000)
		for j := range ks {
			ks[j] = []int64{rnd.Int64N(int64(keys))}
		}
		bodies[i], _ = json.Marshal(map[string]any{"keys": ks})
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	read := func(i int) time.Duration {
		t0 := time.Now()
		resp, err := client.Post(url+"/v1/metric-groups/accounts/read", "application/json", bytes.NewReader(bodies[i%len(bodies)]))
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		d := time.Since(t0)
		if resp.StatusCode != 200 || n < 100_000 {
			b.Fatalf("status %d, %d bytes", resp.StatusCode, n)
		}
		return d
	}
	for range 50 {
		read(0) // warm up
	}
	serverTimes()
	b.Run("http/idle", func(b *testing.B) {
		for range b.N {
			runtime.GC()
			lat := make([]time.Duration, reads)
			for i := range lat {
				lat[i] = read(i)
			}
			reportLatencies(b, lat, "")
			reportLatencies(b, serverTimes(), "server-")
		}
	})
	b.Run("http/committing", func(b *testing.B) {
		for range b.N {
			runtime.GC()
			stop := make(chan struct{})
			done := make(chan struct{})
			go func() {
				defer close(done)
				rnd := rand.New(rand.NewPCG(5, 6))
				tick := time.NewTicker(100 * time.Millisecond)
				defer tick.Stop()
				changes := make([]metricstore.Change, 1000)
				for {
					select {
					case <-stop:
						return
					case <-tick.C:
					}
					now := time.Now()
					for i := range changes {
						changes[i] = benchChange(rnd, rnd.Int64N(int64(keys)), now)
					}
					if err := ms.Commit("accounts", changes); err != nil {
						panic(err)
					}
				}
			}()
			lat := make([]time.Duration, reads)
			for i := range lat {
				lat[i] = read(i)
			}
			close(stop)
			<-done
			reportLatencies(b, lat, "")
			reportLatencies(b, serverTimes(), "server-")
		}
	})
	b.Run("direct", func(b *testing.B) {
		g, _ := ms.Definition("accounts")
		parsed := make([][][]types.Value, len(bodies))
		for i, body := range bodies {
			var req metricReadRequest
			json.Unmarshal(body, &req)
			parsed[i], _ = metricstore.ParseKeys(g, req.Keys)
		}
		var buf []byte
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			var err error
			if buf, err = ms.ReadJSON(buf[:0], "accounts", parsed[i%len(parsed)], nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkMetricStoreSubscribers connects SLUICE_SUBSCRIBERS
// subscribers (default 1,000) to GET /v1/metric-groups/{name}/subscribe
// of a server on a loopback port, from another process (this test
// binary, TestMetricStoreClients), to a group of 100,000 keys, and
// commits 1,000 changes of random keys every 100 ms for
// SLUICE_SUBSCRIBE_SECONDS (default 10), after a second of commits that
// are not counted (the connections warm up). It reports the server's memory
// per subscriber (resident and Go heap, idle subscribers, the server
// with none subtracted), the latency from the call of Commit to the
// arrival of its event at a subscriber, the time a Commit call takes, the events that were snapshots
// (a subscriber that fell behind the change log) and the CPU time of
// each process per second. Subscribers follow every key (all), or ten
// keys each (filtered: each gets about one commit in ten):
//
//	go test ./server -run '^$' -bench MetricStoreSubscribers -benchtime 1x
func BenchmarkMetricStoreSubscribers(b *testing.B) {
	subs := envInt(b, "SLUICE_SUBSCRIBERS", 1000)
	secs := envInt(b, "SLUICE_SUBSCRIBE_SECONDS", 10)
	const keys = 100_000
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []string{"filtered", "all"} {
		b.Run(mode, func(b *testing.B) {
			for range b.N {
				s, url := benchServer(b, 0)
				ms := s.MetricStore()
				if err := ms.Define(benchGroup()); err != nil {
					b.Fatal(err)
				}
				loadAccounts(b, ms, keys)
				measure := func() (rss, heap int64) {
					runtime.GC()
					debug.FreeOSMemory()
					var m runtime.MemStats
					runtime.ReadMemStats(&m)
					return bench.ResidentBytes(), int64(m.HeapInuse + m.StackInuse)
				}
				rss0, heap0 := measure()
				cmd := exec.Command(self, "-test.run=^TestMetricStoreClients$", "-test.v")
				cmd.Env = append(os.Environ(), "SLUICE_CLIENTS_URL="+url, "SLUICE_CLIENTS="+strconv.Itoa(subs), "SLUICE_CLIENTS_MODE="+mode)
				stdin, _ := cmd.StdinPipe()
				stdout, _ := cmd.StdoutPipe()
				cmd.Stderr = os.Stderr
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				lines := bufio.NewScanner(stdout)
				waitFor := func(prefix string) string {
					for lines.Scan() {
						if l := lines.Text(); strings.HasPrefix(l, prefix) {
							return strings.TrimPrefix(l, prefix)
						}
					}
					b.Fatalf("the clients ended without %q", prefix)
					return ""
				}
				waitFor("READY")
				rss1, heap1 := measure()
				if p := os.Getenv("SLUICE_HEAP_PROFILE"); p != "" {
					f, err := os.Create(p)
					if err != nil {
						b.Fatal(err)
					}
					pprof.WriteHeapProfile(f)
					f.Close()
				}
				b.ReportMetric(float64(rss1-rss0)/float64(subs), "rss-B/subscriber")
				b.ReportMetric(float64(heap1-heap0)/float64(subs), "heap-B/subscriber")

				cpu0 := cpuTime()
				rnd := rand.New(rand.NewPCG(7, 8))
				tick := time.NewTicker(100 * time.Millisecond)
				changes := make([]metricstore.Change, 1000)
				var commitTime time.Duration
				// A second of commits first, whose events the clients do not
				// count: the connections warm up.
				for range (secs + 1) * 10 {
					<-tick.C
					now := time.Now()
					for i := range changes {
						changes[i] = benchChange(rnd, rnd.Int64N(keys), now)
					}
					// The latencies count from the call of Commit.
					now = time.Now()
					for i := range changes {
						changes[i].Values[0] = types.BigIntValue(now.UnixMicro())
					}
					if err := ms.Commit("accounts", changes); err != nil {
						b.Fatal(err)
					}
					commitTime += time.Since(now)
				}
				tick.Stop()
				time.Sleep(time.Second) // the last events arrive
				b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(secs+2), "server-cpu-s/s")
				b.ReportMetric(float64(commitTime.Microseconds())/float64((secs+1)*10)/1000, "commit-ms")
				stdin.Close()
				var res clientResult
				if err := json.Unmarshal([]byte(waitFor("RESULT ")), &res); err != nil {
					b.Fatal(err)
				}
				cmd.Wait()
				s.Close()
				b.ReportMetric(res.P50, "p50-ms")
				b.ReportMetric(res.P99, "p99-ms")
				b.ReportMetric(res.Max, "max-ms")
				b.ReportMetric(float64(res.Events)/float64(subs), "events/subscriber")
				b.ReportMetric(float64(res.Snapshots), "snapshots")
				b.ReportMetric(res.CPU/float64(secs+2), "client-cpu-s/s")
			}
		})
	}
}

type clientResult struct {
	Events, Snapshots int
	P50, P99, Max     float64
	CPU               float64
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestMetricStoreClients is the subscribers of
// BenchmarkMetricStoreSubscribers, run in a process of their own: it
// prints READY once they are all connected, and when its stdin closes
// the latencies of the events they received (now minus the commit time
// each event carries in its first value).
func TestMetricStoreClients(t *testing.T) {
	url := os.Getenv("SLUICE_CLIENTS_URL")
	if url == "" {
		t.Skip("run by BenchmarkMetricStoreSubscribers")
	}
	n, _ := strconv.Atoi(os.Getenv("SLUICE_CLIENTS"))
	filtered := os.Getenv("SLUICE_CLIENTS_MODE") == "filtered"
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n, ReadBufferSize: 64 << 10}}
	var mu sync.Mutex
	var lat []float64
	snapshots := 0
	var counted atomic.Int64
	counted.Store(math.MaxInt64)
	var ready, done sync.WaitGroup
	bodies := make([]io.Closer, n)
	for i := range n {
		path := "/v1/metric-groups/accounts/subscribe"
		if filtered {
			ks := make([]string, 10)
			for j := range ks {
				ks[j] = fmt.Sprintf("[%d]", i*10+j)
			}
			path += "?keys=[" + strings.Join(ks, ",") + "]"
		}
		resp, err := client.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		bodies[i] = resp.Body
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			size := 1 << 20 // an event of 1,000 keys in one line
			if filtered {
				size = 16 << 10
			}
			r := bufio.NewReaderSize(resp.Body, size)
			var mine []float64
			first := true
			for {
				line, err := r.ReadSlice('\n')
				if err == bufio.ErrBufferFull {
					// A long line: copied before the buffer is read again.
					long := append([]byte(nil), line...)
					for err == bufio.ErrBufferFull {
						line, err = r.ReadSlice('\n')
						long = append(long, line...)
					}
					line = long
				}
				if err != nil {
					break
				}
				if first && bytes.HasPrefix(line, []byte(": subscribed")) {
					first = false
					ready.Done()
				}
				if bytes.HasPrefix(line, []byte("event: snapshot")) {
					mu.Lock()
					snapshots++
					mu.Unlock()
				}
				if !bytes.HasPrefix(line, []byte("data: {\"kind\":\"changes\"")) {
					continue
				}
				now := time.Now().UnixMicro()
				i := bytes.Index(line, []byte(`"values":[`))
				if i < 0 {
					continue
				}
				v := line[i+len(`"values":[`):]
				v = v[:bytes.IndexByte(v, ',')]
				at, err := strconv.ParseInt(string(v), 10, 64)
				if err == nil && at >= counted.Load() {
					mine = append(mine, float64(now-at)/1000)
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	ready.Wait()
	// The first second of commits is not counted (see the benchmark).
	counted.Store(time.Now().Add(time.Second).UnixMicro())
	fmt.Println("READY")
	io.Copy(io.Discard, os.Stdin)
	for _, b := range bodies {
		b.Close()
	}
	done.Wait()
	slices.Sort(lat)
	res := clientResult{Events: len(lat), Snapshots: snapshots, CPU: cpuTime().Seconds()}
	if len(lat) > 0 {
		res.P50, res.P99, res.Max = lat[len(lat)/2], lat[len(lat)*99/100], lat[len(lat)-1]
	}
	out, _ := json.Marshal(res)
	fmt.Println("RESULT " + string(out))
}
