package crash_test

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestCrashMQTT is the crash test of the mqtt connector: a private
// Mosquitto (the machine's binary; the test is skipped without one) that
// outlives three `sluice run` processes:
//
//   - the writer publishes the numbers 0..mqttRows-1 at QoS 1 to topic
//     in/x (datagen at a fixed rate into an mqtt sink with its
//     store-and-forward buffer in its state.dir), and is killed with
//     SIGKILL twice and restarted until it ends by itself;
//   - the job reads in/# at QoS 1 with a persistent session, keeps the
//     first row of every number (a deduplication whose state is in its
//     state.dir) and publishes it to out/x; it is killed with SIGKILL at
//     least minKills times, at random moments drawn from the logged seed,
//     and restarted;
//   - the reader prints what arrives on out/#.
//
// Both mqtt ends are at-least-once (docs/connectors.md): the output must
// hold every number; duplicates are allowed and counted. The job's
// deduplication state takes out those the source gets again after a
// crash, so what duplicates remain are the sink's (messages sent again
// after a kill), and the writer's as the job saw them are not in the
// output at all.
func TestCrashMQTT(t *testing.T) {
	rng, dir := crashSetup(t, 0x3a77, "mqtt")
	mosquitto := ""
	for _, p := range []string{"mosquitto", "/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto"} {
		if b, err := exec.LookPath(p); err == nil {
			mosquitto = b
			break
		}
	}
	if mosquitto == "" {
		t.Skip("no mosquitto binary")
	}
	bin := buildSluice(t, dir, os.Getenv("SLUICE_CRASH_RACE") == "1")
	server := startMosquitto(t, mosquitto, dir)
	t.Logf("mosquitto at %s", server)

	const mqttRows = 40_000
	write := func(name, text string) string {
		path := filepath.Join(dir, name+".sql")
		text = strings.NewReplacer("$SERVER", server, "$DIR", dir, "$LAST", strconv.Itoa(mqttRows-1)).Replace(text)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	readerSQL := write("mqtt-reader", `
SET 'pipeline.name' = 'mqtt_reader';
CREATE TABLE o (n INT) WITH ('connector' = 'mqtt', 'server' = '$SERVER', 'topic' = 'out/#', 'format' = 'json', 'qos' = '1',
  'reconnect.max-backoff' = '200 ms');
CREATE TABLE p (n INT) WITH ('connector' = 'print');
INSERT INTO p SELECT n FROM o;`)
	jobSQL := write("mqtt-job", `
SET 'pipeline.name' = 'mqtt_job';
SET 'state.dir' = '$DIR/job-state';
SET 'execution.checkpointing.interval' = '100ms';
CREATE TABLE i (n INT, ts AS PROCTIME()) WITH ('connector' = 'mqtt', 'server' = '$SERVER', 'topic' = 'in/#', 'format' = 'json',
  'qos' = '1', 'reconnect.max-backoff' = '200 ms');
CREATE TABLE o (n INT) WITH ('connector' = 'mqtt', 'server' = '$SERVER', 'topic' = 'out/x', 'format' = 'json', 'qos' = '1',
  'reconnect.max-backoff' = '200 ms');
INSERT INTO o SELECT n FROM (
  SELECT n, ROW_NUMBER() OVER (PARTITION BY n ORDER BY ts) AS rn FROM i
) WHERE rn = 1;`)
	writerSQL := write("mqtt-writer", `
SET 'pipeline.name' = 'mqtt_writer';
SET 'state.dir' = '$DIR/writer-state';
SET 'execution.checkpointing.interval' = '100ms';
CREATE TABLE g (n INT) WITH ('connector' = 'datagen', 'fields.n.kind' = 'sequence', 'fields.n.start' = '0',
  'fields.n.end' = '$LAST', 'rows-per-second' = '4000');
CREATE TABLE i (n INT) WITH ('connector' = 'mqtt', 'server' = '$SERVER', 'topic' = 'in/x', 'format' = 'json', 'qos' = '1',
  'reconnect.max-backoff' = '200 ms');
INSERT INTO i SELECT n FROM g;`)

	readerLog := filepath.Join(dir, "mqtt-reader.log")
	reader := startProc(t, readerLog, bin, "run", readerSQL)
	// The job's first run subscribes (its persistent session then keeps
	// what comes while it is away); the writer starts once it has.
	runs, kills := 0, 0
	startJob := func() *proc {
		runs++
		return startProc(t, filepath.Join(dir, fmt.Sprintf("mqtt-job-%d.log", runs)), bin, "run", jobSQL)
	}
	job := startJob()
	waitSubscribed(t, server, job, reader, readerLog)

	writerDone := make(chan runResult, 1)
	writerKills := []time.Duration{time.Duration(1500+rng.IntN(2000)) * time.Millisecond, time.Duration(1500+rng.IntN(2000)) * time.Millisecond}
	go func() {
		// Two kills of the writer, then a run to its end.
		for w := 1; ; w++ {
			p := startProc(t, filepath.Join(dir, fmt.Sprintf("mqtt-writer-%d.log", w)), bin, "run", writerSQL)
			if w <= 2 {
				if r := p.killAfter(t, writerKills[w-1]); !r.killed {
					writerDone <- r
					return
				}
				continue
			}
			writerDone <- p.wait(t, runTimeout)
			return
		}
	}()

	// Kill the job at random moments until the writer is done and the
	// job has been killed enough.
	var writerResult *runResult
	for kills < plannedKills || writerResult == nil {
		delay := time.Duration(200+rng.IntN(2500)) * time.Millisecond
		if kills >= plannedKills {
			delay = time.Hour // let it run once the kills are done
		}
		timer := time.NewTimer(delay)
		select {
		case r := <-writerDone:
			timer.Stop()
			if !r.ok() {
				t.Fatalf("the writer failed: %s\n%s", r, tail(filepath.Join(dir, "mqtt-writer-3.log")))
			}
			writerResult = &r
			continue
		case <-job.done:
			timer.Stop()
			r := job.result(false)
			t.Fatalf("run %d of the job ended by itself: %s\n%s", runs, r, tail(job.log.Name()))
		case <-timer.C:
		}
		r := job.killAfter(t, 0)
		if !r.killed {
			t.Fatalf("run %d of the job ended before its kill: %s\n%s", runs, r, tail(job.log.Name()))
		}
		kills++
		t.Logf("run %d killed after %v", runs, r.took.Round(time.Millisecond))
		job = startJob()
	}
	if kills < minKills {
		t.Fatalf("the job was killed %d times, want at least %d", kills, minKills)
	}

	// Wait for every number to reach the reader.
	deadline := time.Now().Add(runTimeout)
	var got map[int]int
	for {
		got = printedInts(t, readerLog)
		if len(got) >= mqttRows || time.Now().After(deadline) {
			break
		}
		select {
		case <-job.done:
			t.Fatalf("run %d of the job ended by itself: %s\n%s", runs, job.result(false), tail(job.log.Name()))
		case <-time.After(200 * time.Millisecond):
		}
	}
	var missing []int
	dups := 0
	for n := range mqttRows {
		switch c := got[n]; {
		case c == 0:
			missing = append(missing, n)
		case c > 1:
			dups += c - 1
		}
	}
	for n := range got {
		if n < -1 || n >= mqttRows {
			t.Errorf("the output holds %d, which was never published", n)
		}
	}
	if len(missing) > 0 {
		if len(missing) > 20 {
			missing = append(missing[:20], -1)
		}
		t.Fatalf("%d of %d numbers never reached the output (first: %v, -1 = more)\n%s", mqttRows-len(got), mqttRows, missing, tail(job.log.Name()))
	}
	t.Logf("%d numbers through %d kills of the job and 2 of the writer: none lost, %d duplicates", mqttRows, kills, dups)
	for _, p := range []*proc{job, reader} {
		p.cmd.Process.Signal(os.Interrupt)
		if r := p.wait(t, time.Minute); !r.ok() {
			t.Errorf("%s did not stop cleanly: %s\n%s", filepath.Base(p.log.Name()), r, tail(p.log.Name()))
		}
	}
}

// startMosquitto starts a private Mosquitto on a free loopback port, with
// no limit on the messages it queues for a persistent session (its
// default drops what passes 1,000), and returns its address.
func startMosquitto(t *testing.T, bin, dir string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	conf := filepath.Join(dir, "mosquitto.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, "listener %d 127.0.0.1\nallow_anonymous true\nmax_queued_messages 0\n", port), 0o644); err != nil {
		t.Fatal(err)
	}
	log, err := os.Create(filepath.Join(dir, "mosquitto.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-c", conf)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait(); log.Close() })
	for range 500 {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			return fmt.Sprintf("tcp://127.0.0.1:%d", port)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("mosquitto did not start")
	return ""
}

// waitSubscribed publishes probes (-1) to in/x until the reader prints
// one: the job and the reader have both subscribed.
func waitSubscribed(t *testing.T, server string, job, reader *proc, readerLog string) {
	t.Helper()
	pub, err := exec.LookPath("mosquitto_pub")
	if err != nil {
		// Without the client, wait a moment instead.
		time.Sleep(3 * time.Second)
		return
	}
	port := server[strings.LastIndex(server, ":")+1:]
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		for _, p := range []*proc{job, reader} {
			select {
			case <-p.done:
				t.Fatalf("%s ended: %s\n%s", filepath.Base(p.log.Name()), p.result(false), tail(p.log.Name()))
			default:
			}
		}
		exec.Command(pub, "-h", "127.0.0.1", "-p", port, "-q", "1", "-t", "in/x", "-m", `{"n":-1}`).Run()
		for range 10 {
			if printedInts(t, readerLog)[-1] > 0 {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	t.Fatal("the probe never reached the reader")
}

// printedInts counts the rows +I[n] a print sink wrote to log.
func printedInts(t *testing.T, log string) map[int]int {
	t.Helper()
	f, err := os.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := map[int]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "+I[") || !strings.HasSuffix(line, "]") {
			continue
		}
		n, err := strconv.Atoi(line[3 : len(line)-1])
		if err != nil {
			continue
		}
		m[n]++
	}
	return m
}
