package interop_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicesql/sluice"
)

// mqttAddr returns the broker of SLUICE_MQTT_ADDR (tcp://127.0.0.1:1883,
// the machine's Mosquitto), or skips.
func mqttAddr(t *testing.T) string {
	addr := os.Getenv("SLUICE_MQTT_ADDR")
	if addr == "" {
		t.Skip("set SLUICE_MQTT_ADDR (e.g. tcp://127.0.0.1:1883) to test the mqtt connector against Mosquitto")
	}
	return addr
}

// lockedBuffer is written by an engine while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *lockedBuffer) rows() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, s := range strings.Split(l.b.String(), "\n") {
		if strings.HasPrefix(s, "+I") {
			out = append(out, s)
		}
	}
	return out
}

// waitRows waits up to d for n rows.
func (l *lockedBuffer) waitRows(n int, d time.Duration) []string {
	deadline := time.Now().Add(d)
	for len(l.rows()) < n && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	return l.rows()
}

type mqttEngine struct {
	*sluice.Engine
	out *lockedBuffer
}

func openEngine(t *testing.T) *mqttEngine {
	t.Helper()
	out := &lockedBuffer{}
	e, err := sluice.Open(sluice.Options{Stdout: out, Log: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return &mqttEngine{e, out}
}

// start runs the statements of src (with the replacements) and returns the
// last job started.
func (e *mqttEngine) start(t *testing.T, src string, repl ...string) *sluice.Job {
	t.Helper()
	src = strings.NewReplacer(repl...).Replace(src)
	res, err := e.Exec(context.Background(), "test.sql", []byte(src))
	if err != nil {
		t.Fatal(sluice.FormatError(err, []byte(src)))
	}
	for i := len(res) - 1; i >= 0; i-- {
		if res[i].Job != nil {
			return res[i].Job
		}
	}
	t.Fatal("no job")
	return nil
}

func finish(t *testing.T, j *sluice.Job, stopFirst bool) {
	t.Helper()
	if stopFirst {
		j.Stop()
	}
	select {
	case <-j.Done():
	case <-time.After(60 * time.Second):
		j.Cancel()
		t.Fatal("the job did not end")
	}
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
}

// publish publishes rows n = from..to-1 to topic through a bounded job.
func publish(t *testing.T, server, topic, version string, qos, from, to int) {
	t.Helper()
	e := openEngine(t)
	j := e.start(t, `
CREATE TABLE g (n INT) WITH ('connector' = 'datagen', 'fields.n.kind' = 'sequence', 'fields.n.start' = '$FROM', 'fields.n.end' = '$TO');
CREATE TABLE p (n INT, topic STRING) WITH ('connector' = 'mqtt', 'server' = '$SERVER', 'topic' = '$TOPIC', 'format' = 'json',
  'protocol-version' = '$V', 'qos' = '$Q', 'sink.topic-column' = 'topic');
INSERT INTO p SELECT n, CONCAT('$TOPIC/', CAST(MOD(n, 3) AS STRING)) FROM g;`,
		"$SERVER", server, "$TOPIC", topic, "$V", version, "$Q", fmt.Sprint(qos), "$FROM", fmt.Sprint(from), "$TO", fmt.Sprint(to-1))
	finish(t, j, false)
}

// ready publishes probes (n = -1) until out shows one: the reader has
// subscribed.
func ready(t *testing.T, out *lockedBuffer, server, topic string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		publish(t, server, topic, "5", 1, -1, 0)
		for range 20 {
			for _, r := range out.rows() {
				if strings.HasPrefix(r, "+I[-1") {
					return
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	t.Fatal("the source never saw a probe")
}

// without drops the probes.
func without(rows []string) []string {
	var out []string
	for _, r := range rows {
		if !strings.HasPrefix(r, "+I[-1") {
			out = append(out, r)
		}
	}
	return out
}

// TestMQTTMosquitto runs jobs against Mosquitto in both protocol versions
// and every QoS: wildcards with the topic and QoS as metadata, a sink
// whose topic is a column, order kept.
func TestMQTTMosquitto(t *testing.T) {
	server := mqttAddr(t)
	for _, v := range []string{"5", "3.1.1"} {
		for q := 0; q <= 2; q++ {
			t.Run(fmt.Sprintf("%s/qos%d", v, q), func(t *testing.T) {
				topic := fmt.Sprintf("sluice-it/%d", time.Now().UnixNano())
				e := openEngine(t)
				j := e.start(t, `
CREATE TABLE m (n INT, topic STRING METADATA VIRTUAL, q INT METADATA FROM 'qos' VIRTUAL) WITH ('connector' = 'mqtt',
  'server' = '$SERVER', 'topic' = '$TOPIC/+', 'format' = 'json', 'protocol-version' = '$V', 'qos' = '$Q', 'scan.session.persistent' = 'false');
CREATE TABLE out (n INT, topic STRING, q INT) WITH ('connector' = 'print');
INSERT INTO out SELECT * FROM m;`, "$SERVER", server, "$TOPIC", topic, "$V", v, "$Q", fmt.Sprint(q))
				ready(t, e.out, server, topic)
				const n = 2000
				publish(t, server, topic, v, q, 0, n)
				got := e.out.waitRows(n+1, 30*time.Second)
				finish(t, j, true)
				got = without(got)
				if len(got) != n {
					t.Fatalf("got %d rows, want %d", len(got), n)
				}
				for i, r := range got {
					want := fmt.Sprintf("+I[%d, %s/%d, %d]", i, topic, i%3, q)
					if r != want {
						t.Fatalf("row %d: %s, want %s", i, r, want)
					}
				}
			})
		}
	}
}

// TestMQTTMosquittoPersistentSession stops a job, publishes while it is
// away and starts it again: Mosquitto kept the messages, in order, and
// the job gets each once.
func TestMQTTMosquittoPersistentSession(t *testing.T) {
	server := mqttAddr(t)
	for _, v := range []string{"5", "3.1.1"} {
		t.Run(v, func(t *testing.T) {
			topic := fmt.Sprintf("sluice-it/p%d", time.Now().UnixNano())
			dir := t.TempDir()
			src := `
SET 'state.dir' = '$DIR';
SET 'pipeline.name' = 'persist';
SET 'execution.checkpointing.interval' = '100ms';
CREATE TABLE m (n INT) WITH ('connector' = 'mqtt', 'server' = '$SERVER', 'topic' = '$TOPIC/#', 'format' = 'json',
  'protocol-version' = '$V', 'qos' = '1');
CREATE TABLE out (n INT) WITH ('connector' = 'print');
INSERT INTO out SELECT * FROM m;`
			repl := []string{"$SERVER", server, "$TOPIC", topic, "$V", v, "$DIR", dir}
			e := openEngine(t)
			j := e.start(t, src, repl...)
			ready(t, e.out, server, topic)
			publish(t, server, topic, v, 1, 0, 100)
			first := without(e.out.waitRows(101, 20*time.Second))
			finish(t, j, true)
			e.Close()
			publish(t, server, topic, v, 1, 100, 300)
			e2 := openEngine(t)
			j2 := e2.start(t, src, repl...)
			second := without(e2.out.waitRows(200, 20*time.Second))
			time.Sleep(200 * time.Millisecond)
			finish(t, j2, true)
			second = without(e2.out.rows())
			got := append(first, second...)
			if len(got) != 300 {
				t.Fatalf("got %d rows, want 300", len(got))
			}
			for i, r := range got {
				if r != fmt.Sprintf("+I[%d]", i) {
					t.Fatalf("row %d: %s", i, r)
				}
			}
		})
	}
}

// TestMQTTMosquittoSharedSubscription splits a topic between two jobs.
func TestMQTTMosquittoSharedSubscription(t *testing.T) {
	server := mqttAddr(t)
	topic := fmt.Sprintf("sluice-it/s%d", time.Now().UnixNano())
	src := `
SET 'pipeline.name' = '$NAME';
CREATE TABLE m (n INT) WITH ('connector' = 'mqtt', 'server' = '$SERVER', 'topic' = '$TOPIC/+', 'format' = 'json',
  'scan.shared-group' = 'g', 'scan.session.persistent' = 'false');
CREATE TABLE out (n INT) WITH ('connector' = 'print');
INSERT INTO out SELECT * FROM m;`
	e1, e2 := openEngine(t), openEngine(t)
	j1 := e1.start(t, src, "$SERVER", server, "$TOPIC", topic, "$NAME", "one")
	j2 := e2.start(t, src, "$SERVER", server, "$TOPIC", topic, "$NAME", "two")
	ready(t, e1.out, server, topic)
	ready(t, e2.out, server, topic)
	const n = 1000
	publish(t, server, topic, "5", 1, 0, n)
	deadline := time.Now().Add(20 * time.Second)
	for len(without(e1.out.rows()))+len(without(e2.out.rows())) < n && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	finish(t, j1, true)
	finish(t, j2, true)
	a, b := without(e1.out.rows()), without(e2.out.rows())
	if len(a) == 0 || len(b) == 0 || len(a)+len(b) != n {
		t.Fatalf("the jobs got %d and %d rows of %d", len(a), len(b), n)
	}
	all := append(a, b...)
	sort.Slice(all, func(i, j int) bool { return len(all[i]) < len(all[j]) || len(all[i]) == len(all[j]) && all[i] < all[j] })
	for i, r := range all {
		if r != fmt.Sprintf("+I[%d]", i) {
			t.Fatalf("row %s missing or twice", fmt.Sprintf("+I[%d]", i))
		}
	}
}

// TestMQTTMosquittoRestart runs a private Mosquitto, stops it while a job
// publishes to it and starts it again: the sink keeps what it cannot
// deliver on disk and sends it, in order, once the broker is back.
func TestMQTTMosquittoRestart(t *testing.T) {
	mqttAddr(t)
	bin, err := exec.LookPath("mosquitto")
	if err != nil {
		for _, p := range []string{"/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto"} {
			if _, err := os.Stat(p); err == nil {
				bin = p
			}
		}
	}
	if bin == "" {
		t.Skip("no mosquitto binary")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := t.TempDir()
	conf := filepath.Join(dir, "mosquitto.conf")
	// Started as root, Mosquitto runs as the user 'mosquitto' unless told
	// otherwise, and that user cannot write the test's directory: the
	// broker would lose every session at the restart (and with them
	// what was published before the reader subscribed again), which is
	// what this test once took for a loss of the connector's.
	os.WriteFile(conf, fmt.Appendf(nil, "listener %d 127.0.0.1\nallow_anonymous true\npersistence true\npersistence_location %s/\nmax_queued_messages 0\nuser root\n", port, dir), 0o644)
	var cmd *exec.Cmd
	var brokerLog lockedBuffer
	startBroker := func() {
		cmd = exec.Command(bin, "-c", conf)
		cmd.Stdout, cmd.Stderr = &brokerLog, &brokerLog
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		for range 200 {
			if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
				c.Close()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatal("mosquitto did not start")
	}
	stopBroker := func() {
		cmd.Process.Signal(os.Interrupt) // saves its sessions
		cmd.Wait()
		if strings.Contains(brokerLog.String(), "Error saving") {
			t.Fatalf("mosquitto could not save its sessions:\n%s", brokerLog.String())
		}
	}
	startBroker()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	server := fmt.Sprintf("tcp://127.0.0.1:%d", port)

	// The reader: a persistent session, so that what the broker takes
	// before the reader is back reaches it (queued without a limit: by
	// default Mosquitto drops what passes 1,000 messages).
	reader := openEngine(t)
	rj := reader.start(t, `
SET 'pipeline.name' = 'reader';
CREATE TABLE m (n INT) WITH ('connector' = 'mqtt', 'server' = '$SERVER', 'topic' = 'out/#', 'format' = 'json',
  'qos' = '1', 'reconnect.max-backoff' = '200 ms');
CREATE TABLE out (n INT) WITH ('connector' = 'print');
INSERT INTO out SELECT * FROM m;`, "$SERVER", server)
	ready(t, reader.out, server, "out")
	const n = 3000
	writer := openEngine(t)
	wj := writer.start(t, `
SET 'state.dir' = '$DIR';
SET 'execution.checkpointing.interval' = '100ms';
CREATE TABLE g (n INT) WITH ('connector' = 'datagen', 'fields.n.kind' = 'sequence', 'fields.n.start' = '0', 'fields.n.end' = '$LAST',
  'rows-per-second' = '1000');
CREATE TABLE p (n INT) WITH ('connector' = 'mqtt', 'server' = '$SERVER', 'topic' = 'out/x', 'format' = 'json', 'qos' = '1',
  'reconnect.max-backoff' = '200 ms');
INSERT INTO p SELECT * FROM g;`, "$SERVER", server, "$DIR", filepath.Join(dir, "state"), "$LAST", fmt.Sprint(n-1))
	time.Sleep(800 * time.Millisecond)
	stopBroker()
	time.Sleep(1200 * time.Millisecond) // the writer buffers meanwhile
	startBroker()
	finish(t, wj, false)
	// Wait for every number, not for a count of rows: the messages sent
	// again after the restart (at-least-once) make up the count before
	// the last ones have come.
	var got []string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		got = without(reader.out.rows())
		distinct := map[string]bool{}
		for _, r := range got {
			distinct[r] = true
		}
		if len(distinct) >= n {
			break
		}
	}
	finish(t, rj, true)
	seen := map[string]bool{}
	var order []string
	for _, r := range got {
		if !seen[r] {
			seen[r] = true
			order = append(order, r)
		}
	}
	if len(order) != n {
		var missing []int
		for i := range n {
			if !seen[fmt.Sprintf("+I[%d]", i)] {
				missing = append(missing, i)
			}
		}
		t.Fatalf("got %d distinct rows, want %d; missing %v", len(order), n, missing)
	}
	for i, r := range order {
		if r != fmt.Sprintf("+I[%d]", i) {
			t.Fatalf("row %d: %s (out of order)", i, r)
		}
	}
	t.Logf("%d rows, %d duplicates", n, len(got)-n)
}

// TestMQTTMosquittoLargeBacklog reopens a persistent session for which a
// private Mosquitto (queueing without a limit) kept more messages than a
// reader's inbox holds: the broker sends them before it answers the
// reader's SUBSCRIBE, and the reader must take them in while it waits
// for that answer, not stall until it gives up.
func TestMQTTMosquittoLargeBacklog(t *testing.T) {
	mqttAddr(t)
	server := privateMosquitto(t)
	topic := "backlog"
	dir := t.TempDir()
	src := `
SET 'state.dir' = '$DIR';
SET 'pipeline.name' = 'backlog';
SET 'execution.checkpointing.interval' = '100ms';
CREATE TABLE m (n INT) WITH ('connector' = 'mqtt', 'server' = '$SERVER', 'topic' = '$TOPIC/#', 'format' = 'json', 'qos' = '1',
  'connect.timeout' = '10 s');
CREATE TABLE out (n INT) WITH ('connector' = 'print');
INSERT INTO out SELECT * FROM m;`
	repl := []string{"$SERVER", server, "$TOPIC", topic, "$DIR", dir}
	e := openEngine(t)
	j := e.start(t, src, repl...)
	ready(t, e.out, server, topic)
	finish(t, j, true)
	e.Close()
	const n = 5000 // the inbox holds 1,024
	publish(t, server, topic, "5", 1, 0, n)
	e2 := openEngine(t)
	j2 := e2.start(t, src, repl...)
	got := without(e2.out.waitRows(n, 30*time.Second))
	finish(t, j2, true)
	if len(got) != n {
		t.Fatalf("got %d of the %d messages kept for the session", len(got), n)
	}
	for i, r := range got {
		if r != fmt.Sprintf("+I[%d]", i) {
			t.Fatalf("row %d: %s (out of order)", i, r)
		}
	}
}

// privateMosquitto starts a Mosquitto of the test's own on a free port,
// queueing without a limit for persistent sessions, and returns its URL.
func privateMosquitto(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("mosquitto")
	if err != nil {
		for _, p := range []string{"/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto"} {
			if _, err := os.Stat(p); err == nil {
				bin = p
			}
		}
	}
	if bin == "" {
		t.Skip("no mosquitto binary")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	conf := filepath.Join(t.TempDir(), "mosquitto.conf")
	os.WriteFile(conf, fmt.Appendf(nil, "listener %d 127.0.0.1\nallow_anonymous true\nmax_queued_messages 0\n", port), 0o644)
	cmd := exec.Command(bin, "-c", conf)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for range 300 {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			return fmt.Sprintf("tcp://127.0.0.1:%d", port)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("mosquitto did not start")
	return ""
}
