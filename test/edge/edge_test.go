// Package edge_test measures Sluice as an edge box runs it: the release
// binary (static, stripped) as its own process, on one core and a memory
// limit.
//
// BenchmarkFootprint reports the release binary's size and the resident
// memory of an idle server and of one small job (datagen → filter →
// blackhole), as `sluice serve` and as `sluice run`.
//
// BenchmarkEdgeProfile runs the edge profile: 100 MQTT → filter → MQTT
// rules in one `sluice run` process pinned to one core (GOMAXPROCS=1,
// taskset), with GOMEMLIMIT, fed 10,000 JSON messages a second through
// a private Mosquitto for 30 seconds; it reports the share of the core
// the process used, its peak resident memory, the input rate it kept up
// with and whether every alert arrived.
//
//	go test ./test/edge -run '^$' -bench . -benchtime 1x
//
// Both need Linux (/proc); the profile needs the mosquitto binary.
// SLUICE_BUILD_TAGS=norocketmq measures the build without the rocketmq
// connector. TestDeadMethodElimination (SLUICE_DCE_TEST=1) guards the
// linker's removal of unused methods, a sixth of the binary.
package edge_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluicesql/sluice/internal/mqtttest"
)

// buildRelease builds the release binary as scripts/release.sh does.
func buildRelease(b *testing.B, dir string) string {
	b.Helper()
	bin := filepath.Join(dir, "sluice")
	goBuild(b, bin, "-s -w")
	return bin
}

// goBuild builds cmd/sluice into bin with the release build's tags
// (grpcnotrace, see scripts/release.sh, and SLUICE_BUILD_TAGS) and
// ldflags, and returns what the build printed.
func goBuild(tb testing.TB, bin, ldflags string) []byte {
	tb.Helper()
	cmd := exec.Command("go", "build", "-trimpath", "-tags", "grpcnotrace "+os.Getenv("SLUICE_BUILD_TAGS"), "-ldflags", ldflags, "-o", bin, "github.com/sluicesql/sluice/cmd/sluice")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("cannot build the release binary: %v\n%s", err, out)
	}
	return out
}

// TestDeadMethodElimination builds the release binary with the linker's
// -dumpdep (every symbol it keeps, and the first that reached it) and
// fails when a kept function may call a method that reflection looks up
// (reflect.Value.Method, MethodByName with a name not known when
// compiling): the linker then keeps every exported method of every type
// in the binary, 7 MB of it. text/template does; golang.org/x/net/trace
// (gRPC's, without the tag grpcnotrace) brought it, and so did
// google.golang.org/protobuf v1.36.8 through reflect.Value.Methods. It
// prints the chain that reached the first such function; the others may
// be kept only because of it.
//
// It compiles every package with the release flags: SLUICE_DCE_TEST=1
// runs it (.ci/run does, after the release build).
func TestDeadMethodElimination(t *testing.T) {
	if os.Getenv("SLUICE_DCE_TEST") == "" {
		t.Skip("set SLUICE_DCE_TEST=1 to check the release binary's dead method elimination")
	}
	out := goBuild(t, filepath.Join(t.TempDir(), "sluice"), "-s -w -dumpdep")
	// Lines are "from -> to", each name perhaps followed by flags such
	// as <UsedInIface> or <ReflectMethod>.
	name := func(s string) string { n, _, _ := strings.Cut(s, " <"); return strings.TrimSpace(n) }
	parent := map[string]string{}
	var reflective []string
	for line := range strings.Lines(string(out)) {
		from, to, ok := strings.Cut(strings.TrimSuffix(line, "\n"), " -> ")
		if !ok {
			continue
		}
		if _, seen := parent[name(to)]; !seen {
			parent[name(to)] = name(from)
			if strings.Contains(to, "<ReflectMethod>") {
				reflective = append(reflective, name(to))
			}
		}
	}
	if _, ok := parent["main.main"]; !ok || len(parent) < 10000 {
		t.Fatalf("the linker's -dumpdep printed %d symbols, none of them main.main: not the format this test reads", len(parent))
	}
	if len(reflective) == 0 {
		return
	}
	chain := []string{reflective[0]}
	for n := reflective[0]; len(chain) < 40; {
		p, ok := parent[n]
		if !ok || p == "_" {
			break
		}
		chain = append(chain, p)
		n = p
	}
	slices.Reverse(chain)
	t.Errorf("%s looks methods up by reflection, so the linker keeps every exported method; reached by\n\t%s\nthen also: %s",
		reflective[0], strings.Join(chain, "\n\t"), strings.Join(reflective[1:], ", "))
}

// status reads a field of /proc/pid/status, in kB.
func status(b *testing.B, pid int, field string) float64 {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Skip("no /proc:", err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			n, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return n
		}
	}
	b.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// cpuSeconds reads the user and system time of process pid.
func cpuSeconds(b *testing.B, pid int) float64 {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// The fields after the command's name (in parentheses): utime and
	// stime are the 12th and 13th of them, in clock ticks (100 a second
	// on Linux).
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	u, _ := strconv.ParseFloat(f[11], 64)
	s, _ := strconv.ParseFloat(f[12], 64)
	return (u + s) / 100
}

func start(b *testing.B, dir, name string, env []string, bin string, args ...string) *exec.Cmd {
	b.Helper()
	log, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		log.Close()
	})
	return cmd
}

func freePort(b *testing.B) int {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

const smallJob = `CREATE TABLE g (id BIGINT, v INT) WITH ('connector' = 'datagen', 'rows-per-second' = '1000');
CREATE TABLE b (id BIGINT, v INT) WITH ('connector' = 'blackhole');
INSERT INTO b SELECT id, v FROM g WHERE v > 0;`

func BenchmarkFootprint(b *testing.B) {
	dir := b.TempDir()
	bin := buildRelease(b, dir)
	fi, err := os.Stat(bin)
	if err != nil {
		b.Fatal(err)
	}
	// settle: the binary trims the pages start-up used a few seconds
	// after its jobs start (internal/trim); measure after that.
	const settle = 8 * time.Second
	for i := 0; i < b.N; i++ {
		port := freePort(b)
		srv := start(b, dir, "serve", nil, bin, "serve", "--data-dir", filepath.Join(dir, fmt.Sprint("data", i)),
			"--auth=false", "--listen", fmt.Sprintf("127.0.0.1:%d", port))
		time.Sleep(settle)
		idle := status(b, srv.Process.Pid, "VmRSS")
		body := fmt.Sprintf(`{"name": "small", "sql": %s}`, strconv.Quote(smallJob))
		out, err := exec.Command("curl", "-sf", "-XPOST", fmt.Sprintf("http://127.0.0.1:%d/v1/jobs", port),
			"-H", "Content-Type: application/json", "-d", body).CombinedOutput()
		if err != nil {
			b.Fatalf("POST /v1/jobs: %v\n%s", err, out)
		}
		time.Sleep(settle)
		withJob := status(b, srv.Process.Pid, "VmRSS")
		srv.Process.Signal(syscall.SIGTERM)
		srv.Wait()

		sql := filepath.Join(dir, "small.sql")
		os.WriteFile(sql, []byte(smallJob), 0o644)
		run := start(b, dir, "run", nil, bin, "run", sql)
		time.Sleep(settle)
		job := status(b, run.Process.Pid, "VmRSS")
		run.Process.Signal(syscall.SIGTERM)
		run.Wait()
		b.ReportMetric(float64(fi.Size())/1e6, "binary-MB")
		b.ReportMetric(idle/1024, "idle-server-RSS-MiB")
		b.ReportMetric(withJob/1024, "server+job-RSS-MiB")
		b.ReportMetric(job/1024, "run-job-RSS-MiB")
	}
}

func BenchmarkEdgeProfile(b *testing.B) {
	mosquitto := ""
	for _, p := range []string{"mosquitto", "/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto"} {
		if m, err := exec.LookPath(p); err == nil {
			mosquitto = m
			break
		}
	}
	if mosquitto == "" {
		b.Skip("no mosquitto binary")
	}
	const (
		rules    = 100
		rate     = 10_000 // messages a second
		feed     = 30 * time.Second
		memLimit = "900MiB"
	)
	dir := b.TempDir()
	bin := buildRelease(b, dir)
	port := freePort(b)
	conf := filepath.Join(dir, "mosquitto.conf")
	os.WriteFile(conf, fmt.Appendf(nil, "listener %d 127.0.0.1\nallow_anonymous true\nmax_queued_messages 0\n", port), 0o644)
	start(b, dir, "mosquitto", nil, mosquitto, "-c", conf)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for i := 0; ; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if i > 500 {
			b.Fatal("mosquitto did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	server := "tcp://" + addr

	var src strings.Builder
	fmt.Fprintf(&src, `CREATE TABLE readings (device STRING, temperature INT, humidity INT) WITH ('connector' = 'mqtt',
  'server' = '%s', 'topic' = 'devices/+', 'format' = 'json', 'qos' = '0', 'scan.session.persistent' = 'false');
`, server)
	for k := range rules {
		fmt.Fprintf(&src, `CREATE TABLE alerts%d (device STRING, temperature INT) WITH ('connector' = 'mqtt', 'server' = '%s',
  'topic' = 'alerts/%d', 'format' = 'json', 'qos' = '0');
`, k, server, k)
	}
	src.WriteString("EXECUTE STATEMENT SET BEGIN\n")
	for k := range rules {
		fmt.Fprintf(&src, "INSERT INTO alerts%d SELECT device, temperature FROM readings WHERE device = 'd%d' AND temperature > 50;\n", k, k)
	}
	src.WriteString("END;\n")
	sqlPath := filepath.Join(dir, "rules.sql")
	os.WriteFile(sqlPath, []byte(src.String()), 0o644)

	for i := 0; i < b.N; i++ {
		sub := mqtttest.Dial(b, addr, fmt.Sprint("sub", i))
		sub.Subscribe(b, "alerts/#")
		pub := mqtttest.Dial(b, addr, fmt.Sprint("pub", i))
		args := []string{"run", sqlPath}
		name := bin
		if tp, err := exec.LookPath("taskset"); err == nil {
			name, args = tp, append([]string{"-c", "0", bin}, args...)
		}
		job := start(b, dir, fmt.Sprint("rules", i), []string{"GOMAXPROCS=1", "GOMEMLIMIT=" + memLimit}, name, args...)
		pid := job.Process.Pid

		payload := func(n int) ([]byte, bool) {
			dev, temp := n%100, n*7%101
			return fmt.Appendf(nil, `{"device":"d%d","temperature":%d,"humidity":%d}`, dev, temp, n%97), dev < rules && temp > 50
		}
		// Probes until the job's first alert: it has subscribed and its
		// sinks have connected.
		deadline := time.Now().Add(30 * time.Second)
		for sub.Received() == 0 {
			if time.Now().After(deadline) {
				b.Fatal("the job never alerted")
			}
			pub.Publish(b, "devices/x", []byte(`{"device":"d0","temperature":99}`))
			pub.Flush(b)
			time.Sleep(50 * time.Millisecond)
		}
		time.Sleep(time.Second)
		base := sub.Received()

		want := int64(0)
		cpu0, t0 := cpuSeconds(b, pid), time.Now()
		tick := time.NewTicker(10 * time.Millisecond)
		sent := 0
		for time.Since(t0) < feed {
			<-tick.C
			due := int(time.Since(t0).Seconds() * rate)
			for ; sent < due; sent++ {
				p, alert := payload(sent)
				if alert {
					want++
				}
				pub.Publish(b, "devices/x", p)
			}
			pub.Flush(b)
		}
		tick.Stop()
		fed := time.Since(t0)
		cpu := cpuSeconds(b, pid) - cpu0
		// Every alert arrives soon after the feed ends: the job kept up.
		deadline = time.Now().Add(10 * time.Second)
		for sub.Received()-base < want && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		lag := time.Since(t0) - fed
		got := sub.Received() - base
		peak := status(b, pid, "VmHWM")
		rss := status(b, pid, "VmRSS")
		if got < want {
			b.Errorf("%d of %d alerts arrived (QoS 0 drops what a broker cannot deliver: the job did not keep up)", got, want)
		}
		job.Process.Signal(syscall.SIGTERM)
		job.Wait()
		b.ReportMetric(float64(sent)/fed.Seconds(), "msgs/s")
		b.ReportMetric(100*cpu/fed.Seconds(), "cpu-%")
		b.ReportMetric(float64(sent)/cpu, "msgs/cpu-s")
		b.ReportMetric(peak/1024, "peak-RSS-MiB")
		b.ReportMetric(rss/1024, "RSS-MiB")
		b.ReportMetric(float64(got), "alerts")
		b.ReportMetric(lag.Seconds()*1000, "drain-ms")
	}
}
