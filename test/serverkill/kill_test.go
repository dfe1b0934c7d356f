// Package serverkill_test is the crash test of the server: a `sluice
// serve` process running Kafka jobs is killed with SIGKILL at random
// moments and started again over the same data directory, and the jobs'
// exactly-once output must hold every input row once.
//
// The test builds the sluice binary, starts `sluice dev kafka` as a
// process of its own (the broker outlives the servers it kills), starts
// `sluice serve`, publishes two jobs over its REST API and produces the
// input while it kills and restarts the server:
//
//   - "tofile" reads topic "in" into a file sink, its state in the
//     server's data directory (the sink's output becomes visible with the
//     checkpoint that covers it);
//   - "tokafka" reads "in" into topic "out" through an exactly-once Kafka
//     sink, its state in Kafka ('state.backend' = 'kafka'), so that
//     output, state and positions commit in one transaction.
//
// Once the input is complete and the server has run without a kill, the
// file and a read-committed read of "out" must each hold the input's ids
// exactly once. It needs nothing but Go, and runs only when asked:
//
//	SLUICE_SERVER_KILL_TEST=1 go test -count=1 -v -timeout 10m ./test/serverkill
//
// SLUICE_SERVER_KILL_SEED=n repeats a run's kill plan (the moments still
// depend on timing); SLUICE_SERVER_KILL_DIR=dir keeps the binary, the
// data directory and the logs in dir.
package serverkill_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicesql/sluice/internal/kafkatest"
)

const (
	// inputRows rows, produced in batches of batchRows over 4 partitions.
	inputRows = 200_000
	batchRows = 1_000
	// kills is how many times the server is killed.
	kills = 5
	// guard bounds every wait: a hang fails the test, it is not a
	// measurement.
	guard = 2 * time.Minute
)

func TestServerKill(t *testing.T) {
	if os.Getenv("SLUICE_SERVER_KILL_TEST") == "" {
		t.Skip("set SLUICE_SERVER_KILL_TEST=1 to run the server's crash test")
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("SLUICE_SERVER_KILL_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("SLUICE_SERVER_KILL_SEED: %v", err)
		}
		seed = n
	}
	t.Logf("seed %d (SLUICE_SERVER_KILL_SEED=%d repeats the kill plan)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	dir := os.Getenv("SLUICE_SERVER_KILL_DIR")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := buildSluice(t, dir)
	bs := startBroker(t, bin, dir)
	data, out := filepath.Join(dir, "data"), filepath.Join(dir, "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}

	srv := startServer(t, bin, dir, data, 0)
	srv.publish(t, "tofile", fmt.Sprintf(`CREATE TABLE src (id BIGINT) WITH ('connector' = 'kafka', 'topic' = 'in',
  'properties.bootstrap.servers' = '%s', 'scan.startup.mode' = 'earliest-offset', 'format' = 'json');
CREATE TABLE sink (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s/out.json', 'format' = 'json');
SET 'execution.checkpointing.interval' = '200ms';
INSERT INTO sink SELECT id FROM src;`, bs, out))
	srv.publish(t, "tokafka", fmt.Sprintf(`SET 'state.backend' = 'kafka';
SET 'state.kafka.bootstrap.servers' = '%[1]s';
SET 'execution.checkpointing.interval' = '200ms';
CREATE TABLE src (id BIGINT) WITH ('connector' = 'kafka', 'topic' = 'in',
  'properties.bootstrap.servers' = '%[1]s', 'scan.startup.mode' = 'earliest-offset', 'format' = 'json');
CREATE TABLE sink (id BIGINT) WITH ('connector' = 'kafka', 'topic' = 'out', 'properties.bootstrap.servers' = '%[1]s',
  'format' = 'json', 'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = 'tokafka');
INSERT INTO sink SELECT id FROM src;`, bs))

	// The input is produced while the server is killed and restarted.
	produced := make(chan error, 1)
	go func() {
		cl, err := kgo.NewClient(kgo.SeedBrokers(bs), kgo.DefaultProduceTopic("in"))
		if err != nil {
			produced <- err
			return
		}
		defer cl.Close()
		for from := 0; from < inputRows; from += batchRows {
			var recs []*kgo.Record
			for id := from; id < from+batchRows; id++ {
				recs = append(recs, &kgo.Record{Key: []byte(strconv.Itoa(id)), Value: fmt.Appendf(nil, `{"id":%d}`, id)})
			}
			if err := cl.ProduceSync(t.Context(), recs...).FirstErr(); err != nil {
				produced <- err
				return
			}
			time.Sleep(30 * time.Millisecond)
		}
		produced <- nil
	}()
	for i := 1; i <= kills; i++ {
		// Every other kill comes right after the server is up (its jobs
		// just started again), the others while they run.
		delay := time.Duration(300+rng.IntN(1200)) * time.Millisecond
		if i%2 == 0 {
			delay = time.Duration(rng.IntN(100)) * time.Millisecond
		}
		time.Sleep(delay)
		srv.kill(t)
		t.Logf("kill %d after %v; rows in the file so far: %d", i, delay, len(fileIDs(t, out)))
		srv = startServer(t, bin, dir, data, i)
	}
	if err := <-produced; err != nil {
		t.Fatalf("cannot produce the input: %v", err)
	}
	srv.waitRunning(t, "tofile", "tokafka")

	deadline := time.Now().Add(guard)
	for len(fileIDs(t, out)) < inputRows || countCommitted(t, bs) < inputRows {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %d rows in the file, %d in topic out, of %d\n%s", guard, len(fileIDs(t, out)), countCommitted(t, bs), inputRows, srv.logTail())
		}
		time.Sleep(200 * time.Millisecond)
	}
	check := func(what string, ids []int) {
		t.Helper()
		seen := make([]int, inputRows)
		bad := 0
		for _, id := range ids {
			if id < 0 || id >= inputRows {
				t.Errorf("%s: id %d was never produced", what, id)
				continue
			}
			seen[id]++
		}
		for id, n := range seen {
			if n != 1 {
				if bad < 10 {
					t.Errorf("%s: id %d written %d times", what, id, n)
				}
				bad++
			}
		}
		if bad > 0 {
			t.Errorf("%s: %d ids not written exactly once (of %d rows)", what, bad, len(ids))
		}
	}
	check("file", fileIDs(t, out))
	var ids []int
	for _, r := range kafkatest.ReadAll(t, bs, "out") {
		ids = append(ids, parseID(t, r.Value))
	}
	check("topic out", ids)
	srv.stop(t)
}

// server is a `sluice serve` process.
type server struct {
	cmd  *exec.Cmd
	url  string
	log  string
	done chan error
}

// startServer starts `sluice serve` over data on a free loopback port
// and waits until it answers; run numbers its log.
func startServer(t *testing.T, bin, dir, data string, run int) *server {
	t.Helper()
	logPath := filepath.Join(dir, fmt.Sprintf("server-%d.log", run))
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--data-dir", data, "--auth=false", "--listen", "127.0.0.1:0", "--log-format", "json")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = f
	if err := cmd.Start(); err != nil {
		t.Fatalf("cannot start the server: %v", err)
	}
	s := &server{cmd: cmd, log: logPath, done: make(chan error, 1)}
	addr := make(chan string, 1)
	go func() {
		// The log is copied to the file; the address is read from the
		// line that says where the server listens.
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			fmt.Fprintln(f, sc.Text())
			var line struct{ Msg, Address string }
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "listening" {
				addr <- line.Address
			}
		}
		f.Close()
		s.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		select {
		case <-s.done:
		default:
			cmd.Process.Kill()
		}
	})
	select {
	case s.url = <-addr:
	case err := <-s.done:
		t.Fatalf("the server exited: %v\n%s", err, s.logTail())
	case <-time.After(guard):
		t.Fatalf("the server did not start within %v\n%s", guard, s.logTail())
	}
	return s
}

func (s *server) kill(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-s.done
}

// stop stops the server with SIGTERM; it must exit cleanly.
func (s *server) stop(t *testing.T) {
	t.Helper()
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		if err != nil {
			t.Errorf("the server exited with %v after SIGTERM\n%s", err, s.logTail())
		}
	case <-time.After(guard):
		t.Errorf("the server did not stop within %v of SIGTERM", guard)
	}
}

func (s *server) publish(t *testing.T, name, sql string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"name": name, "sql": sql})
	resp, err := http.Post(s.url+"/v1/jobs", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("publish %s: %d %s", name, resp.StatusCode, b)
	}
}

// waitRunning waits until the jobs run.
func (s *server) waitRunning(t *testing.T, names ...string) {
	t.Helper()
	deadline := time.Now().Add(guard)
	for _, name := range names {
		for {
			resp, err := http.Get(s.url + "/v1/jobs/" + name)
			if err != nil {
				t.Fatal(err)
			}
			var j struct {
				Status string
				Errors []struct{ Message string }
			}
			json.NewDecoder(resp.Body).Decode(&j)
			resp.Body.Close()
			if j.Status == "running" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("job %s is %q, not running: %+v\n%s", name, j.Status, j.Errors, s.logTail())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

func (s *server) logTail() string {
	b, _ := os.ReadFile(s.log)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

func parseID(t *testing.T, b []byte) int {
	t.Helper()
	var row struct{ ID int }
	if err := json.Unmarshal(b, &row); err != nil {
		t.Fatalf("output row %q: %v", b, err)
	}
	return row.ID
}

// fileIDs returns the ids of the file sink's committed output.
func fileIDs(t *testing.T, dir string) []int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "out.json"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var ids []int
	for _, line := range strings.Split(string(b), "\n") {
		if line != "" {
			ids = append(ids, parseID(t, []byte(line)))
		}
	}
	return ids
}

// countCommitted counts the committed records of topic out.
func countCommitted(t *testing.T, bs string) int {
	return len(kafkatest.ReadAll(t, bs, "out"))
}

func buildSluice(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "sluice")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/sluicesql/sluice/cmd/sluice")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cannot build the sluice binary: %v\n%s", err, out)
	}
	return bin
}

// startBroker runs `sluice dev kafka` with the topics in (4 partitions)
// and out and returns its bootstrap address; SIGTERM stops it when the
// test ends.
func startBroker(t *testing.T, bin, dir string) string {
	t.Helper()
	cmd := exec.Command(bin, "dev", "kafka", "--port", "0", "--topic", "in:4", "--topic", "out:2")
	logf, err := os.Create(filepath.Join(dir, "broker.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = logf
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("cannot start the broker: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		logf.Close()
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "Kafka-protocol cluster listening on "); ok {
				addr <- a
			}
		}
	}()
	select {
	case a := <-addr:
		return a
	case <-time.After(guard):
		t.Fatalf("the broker did not start within %v", guard)
	}
	return ""
}
