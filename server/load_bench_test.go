package server

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/sluicesql/sluice/internal/bench"
	"github.com/sluicesql/sluice/internal/cputime"
)

// BenchmarkServerJobs publishes SLUICE_SERVER_JOBS jobs (default 1,000)
// to one server, each a filter over one unbounded procgen table of the
// catalog (SLUICE_SERVER_RATE events a second, default 2,000) (read once for all of them, 'pipeline.shared-source') into a
// blackhole, and reports the resident memory and Go heap (with the
// goroutines' stacks; stack-B/job is those alone) a job adds (the server
// with one job subtracted), then the latency of 1,000 reads of a
// job (GET /v1/jobs/{name}) from 50 concurrent clients while the jobs
// run (p50-ms, p99-ms), and of 1,000 more from 50 clients that each keep
// one connection alive (p50-keepalive-ms, p99-keepalive-ms); alloc-B/read
// is what one of the first reads allocates, in the server and in its
// client alike. cpu-cores is the CPU the process takes while the jobs run (before
// the reads), in cores.
//
//	go test ./server -run '^$' -bench ServerJobs -benchtime 1x
//
// SLUICE_HEAP_PROFILE, SLUICE_GOROUTINE_PROFILE and SLUICE_CPU_PROFILE
// name files for a heap profile and a goroutine profile taken with all
// the jobs running, and a CPU profile of the reads; SLUICE_TRACE names a
// file for an execution trace of the reads (go tool trace: the
// scheduler's latency of the requests' goroutines), SLUICE_MUTEX_PROFILE
// one for a profile of the locks the reads waited for.
func BenchmarkServerJobs(b *testing.B) {
	n := 1000
	if s := os.Getenv("SLUICE_SERVER_JOBS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	if os.Getenv("SLUICE_HEAP_PROFILE") != "" {
		runtime.MemProfileRate = 512
	}
	rate := "2000"
	if r := os.Getenv("SLUICE_SERVER_RATE"); r != "" {
		rate = r
	}
	for range b.N {
		s, err := New(Config{DataDir: b.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			b.Fatal(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		go s.Serve(ln)
		ts := &testServer{t: &testing.T{}, s: s, url: "http://" + ln.Addr().String()}
		post := func(path string, body any) {
			if code, out := ts.call("POST", path, body); code >= 300 {
				b.Fatalf("POST %s: %d %s", path, code, out)
			}
		}
		post("/v1/catalog", map[string]string{"sql": `CREATE TABLE events (event_time TIMESTAMP(3), host STRING, user_name STRING,
  image STRING, command_line STRING) WITH ('connector' = 'procgen', 'rows-per-second' = '` + rate + `');`})
		job := func(i int) map[string]any {
			return map[string]any{"name": fmt.Sprintf("rule%d", i), "sql": fmt.Sprintf(`CREATE TABLE alert (host STRING, command_line STRING) WITH ('connector' = 'blackhole');
INSERT INTO alert SELECT host, command_line FROM events WHERE command_line LIKE '%%tool%d%%';`, i)}
		}
		var cores float64     // CPU the jobs take, in cores, over measure's wait
		var stack int64       // StackInuse, at the last measure
		var allocRate float64 // bytes a second the jobs allocate, over measure's wait
		totalAlloc := func() uint64 {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			return ms.TotalAlloc
		}
		measure := func() (rss, heap int64) {
			cpu, wall, alloc := cputime.Seconds(), time.Now(), totalAlloc()
			time.Sleep(2 * time.Second)
			cores = (cputime.Seconds() - cpu) / time.Since(wall).Seconds()
			allocRate = float64(totalAlloc()-alloc) / time.Since(wall).Seconds()
			runtime.GC()
			debug.FreeOSMemory()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			stack = int64(ms.StackInuse)
			return bench.ResidentBytes(), int64(ms.HeapInuse + ms.StackInuse)
		}
		post("/v1/jobs", job(0))
		rss1, heap1 := measure()
		stack1 := stack
		g1 := runtime.NumGoroutine()
		start := time.Now()
		for i := 1; i < n; i++ {
			post("/v1/jobs", job(i))
		}
		created := time.Since(start)
		rss, heap := measure()
		if p := os.Getenv("SLUICE_GOROUTINE_PROFILE"); p != "" {
			f, err := os.Create(p)
			if err != nil {
				b.Fatal(err)
			}
			pprof.Lookup("goroutine").WriteTo(f, 1)
			f.Close()
		}
		if p := os.Getenv("SLUICE_HEAP_PROFILE"); p != "" {
			f, err := os.Create(p)
			if err != nil {
				b.Fatal(err)
			}
			pprof.WriteHeapProfile(f)
			f.Close()
		}
		b.ReportMetric(float64(runtime.NumGoroutine()-g1)/float64(n-1), "goroutines/job")
		b.ReportMetric(float64(rss-rss1)/float64(n-1), "rss-B/job")
		b.ReportMetric(float64(heap-heap1)/float64(n-1), "heap-B/job")
		b.ReportMetric(float64(stack-stack1)/float64(n-1), "stack-B/job")
		b.ReportMetric(created.Seconds()*1000/float64(n-1), "create-ms/job")
		b.ReportMetric(cores, "cpu-cores")

		if p := os.Getenv("SLUICE_CPU_PROFILE"); p != "" {
			f, err := os.Create(p)
			if err != nil {
				b.Fatal(err)
			}
			pprof.StartCPUProfile(f)
			defer func() { pprof.StopCPUProfile(); f.Close() }()
		}
		if p := os.Getenv("SLUICE_TRACE"); p != "" {
			f, err := os.Create(p)
			if err != nil {
				b.Fatal(err)
			}
			trace.Start(f)
			defer func() { trace.Stop(); f.Close() }()
		}
		if os.Getenv("SLUICE_MUTEX_PROFILE") != "" {
			runtime.SetMutexProfileFraction(1)
		}
		// The reads: 50 clients at once, 20 reads each. First through
		// http.Get, whose transport keeps two idle connections (most
		// reads dial one); then with a connection of each client's own,
		// kept alive: the server's latency without the clients' dials
		// (a client here runs in the server's process).
		reads := func(client func(c int) *http.Client) (lat []time.Duration, errs int) {
			var mu sync.Mutex
			var wg sync.WaitGroup
			for c := range 50 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					hc := client(c)
					for k := range 20 {
						t0 := time.Now()
						resp, err := hc.Get(fmt.Sprintf("%s/v1/jobs/rule%d", ts.url, (c*20+k)%n))
						d := time.Since(t0)
						ok := err == nil && resp.StatusCode == 200
						if err == nil {
							io.Copy(io.Discard, resp.Body)
							resp.Body.Close()
						}
						mu.Lock()
						lat = append(lat, d)
						if !ok {
							errs++
						}
						mu.Unlock()
					}
					hc.CloseIdleConnections()
				}()
			}
			wg.Wait()
			slices.Sort(lat)
			return lat, errs
		}
		start, alloc := time.Now(), totalAlloc()
		lat, errs := reads(func(int) *http.Client { return http.DefaultClient })
		// What a read allocates, the server's and the client's (one
		// process), the jobs' allocations meanwhile left out.
		readAlloc := float64(totalAlloc()-alloc) - allocRate*time.Since(start).Seconds()
		b.ReportMetric(readAlloc/float64(len(lat)), "alloc-B/read")
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		lat, kerrs := reads(func(int) *http.Client { return &http.Client{Transport: &http.Transport{}} })
		errs += kerrs
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-keepalive-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-keepalive-ms")
		b.ReportMetric(float64(errs), "errors")
		pprof.StopCPUProfile()
		trace.Stop()
		if p := os.Getenv("SLUICE_MUTEX_PROFILE"); p != "" {
			f, err := os.Create(p)
			if err != nil {
				b.Fatal(err)
			}
			pprof.Lookup("mutex").WriteTo(f, 0)
			f.Close()
			runtime.SetMutexProfileFraction(0)
		}
		s.Close()
	}
}
