package crash_test

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestCrashHTTP is the crash test of the http connector's push source
// and sink:
//
//   - a client in the test posts the numbers 0..httpEvents-1, a batch of
//     them a request, from several goroutines, each request sent again
//     (after a connection error, or any answer but 200) until it is
//     answered 200;
//   - the job receives them on a push endpoint, keeps the first row of
//     every number (a deduplication whose state is in its state.dir,
//     checkpointed every 100 ms) and sends it to the receiver with an
//     http sink; it is killed with SIGKILL at least minKills times, at
//     random moments drawn from the logged seed, and restarted;
//   - the receiver, in the test, keeps what arrives and answers one
//     request in ten 503 (the sink retries).
//
// The push source answers 200 only once the checkpoint holding a
// request's rows completed, and a checkpoint completes only once the
// sink has delivered what came before it: so when the client hears 200
// for a number, the receiver has it (checked at every answer), and once
// every number was answered, the receiver has them all. Both ends are
// at-least-once (docs/connectors.md): duplicates are allowed and counted.
func TestCrashHTTP(t *testing.T) {
	rng, dir := crashSetup(t, 0x4777, "http")
	bin := buildSluice(t, dir, os.Getenv("SLUICE_CRASH_RACE") == "1")

	const (
		httpEvents = 20_000
		perRequest = 20
		clients    = 8
	)

	// The receiver.
	var (
		mu       sync.Mutex
		got      = map[int]int{}
		refusals atomic.Int64
	)
	recvRng := rand.New(rand.NewPCG(rng.Uint64(), 1))
	var recvMu sync.Mutex
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		recvMu.Lock()
		refuse := recvRng.IntN(10) == 0
		recvMu.Unlock()
		if refuse {
			refusals.Add(1)
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		var rows []struct{ N *int }
		if err := json.Unmarshal(body, &rows); err != nil {
			t.Errorf("the receiver got %q: %v", body, err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		mu.Lock()
		for _, row := range rows {
			if row.N == nil {
				t.Errorf("the receiver got a row without n: %s", body)
				continue
			}
			got[*row.N]++
		}
		mu.Unlock()
	}))
	defer receiver.Close()

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	jobSQL := filepath.Join(dir, "http-job.sql")
	sql := strings.NewReplacer("$DIR", dir, "$PORT", strconv.Itoa(port), "$URL", receiver.URL).Replace(`
SET 'pipeline.name' = 'http_job';
SET 'state.dir' = '$DIR/job-state';
SET 'execution.checkpointing.interval' = '100ms';
CREATE TABLE i (n INT, ts AS PROCTIME()) WITH ('connector' = 'http', 'source.listen' = '127.0.0.1:$PORT',
  'source.token' = 'crash-test-token');
CREATE TABLE o (n INT) WITH ('connector' = 'http', 'url' = '$URL/in', 'sink.buffer-flush.max-rows' = '200',
  'sink.max-retries' = '30', 'sink.retry.initial-backoff' = '10 ms', 'sink.retry.max-backoff' = '200 ms');
INSERT INTO o SELECT n FROM (
  SELECT n, ROW_NUMBER() OVER (PARTITION BY n ORDER BY ts) AS rn FROM i
) WHERE rn = 1;`)
	if err := os.WriteFile(jobSQL, []byte(sql), 0o644); err != nil {
		t.Fatal(err)
	}
	endpoint := fmt.Sprintf("http://127.0.0.1:%d/", port)

	runs, kills := 0, 0
	startJob := func() *proc {
		runs++
		return startProc(t, filepath.Join(dir, fmt.Sprintf("http-job-%d.log", runs)), bin, "run", jobSQL)
	}
	job := startJob()

	// The client.
	var (
		next                  atomic.Int64
		attempts, connErrs    atomic.Int64
		unavailable, answered atomic.Int64
		early                 atomic.Int64 // 200 before the receiver had the numbers
		clientWG              sync.WaitGroup
	)
	client := &http.Client{Timeout: time.Minute}
	clientDone := make(chan struct{})
	for range clients {
		clientWG.Add(1)
		go func() {
			defer clientWG.Done()
			for {
				first := int(next.Add(perRequest)) - perRequest
				if first >= httpEvents {
					return
				}
				var b strings.Builder
				b.WriteByte('[')
				for n := first; n < min(first+perRequest, httpEvents); n++ {
					if n > first {
						b.WriteByte(',')
					}
					fmt.Fprintf(&b, `{"n":%d}`, n)
				}
				b.WriteByte(']')
				body := b.String()
				for {
					attempts.Add(1)
					req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
					req.Header.Set("Authorization", "Bearer crash-test-token")
					resp, err := client.Do(req)
					if err != nil {
						connErrs.Add(1)
						time.Sleep(20 * time.Millisecond)
						continue
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode == http.StatusOK {
						break
					}
					if resp.StatusCode != http.StatusServiceUnavailable {
						t.Errorf("the job answered %s to numbers %d..", resp.Status, first)
						return
					}
					unavailable.Add(1)
					time.Sleep(20 * time.Millisecond)
				}
				answered.Add(1)
				mu.Lock()
				for n := first; n < min(first+perRequest, httpEvents); n++ {
					if got[n] == 0 {
						early.Add(1)
					}
				}
				mu.Unlock()
			}
		}()
	}
	go func() { clientWG.Wait(); close(clientDone) }()

	// Kill the job at random moments until the client is done and the
	// job has been killed enough.
	done := false
	for kills < plannedKills || !done {
		delay := time.Duration(200+rng.IntN(2500)) * time.Millisecond
		if kills >= plannedKills {
			delay = time.Hour // let it run once the kills are done
		}
		timer := time.NewTimer(delay)
		select {
		case <-clientDone:
			timer.Stop()
			done = true
			clientDone = nil
			continue
		case <-job.done:
			timer.Stop()
			t.Fatalf("run %d of the job ended by itself: %s\n%s", runs, job.result(false), tail(job.log.Name()))
		case <-time.After(runTimeout):
			t.Fatalf("the client did not finish within %v (%d of %d requests answered)\n%s", runTimeout, answered.Load(), httpEvents/perRequest, tail(job.log.Name()))
		case <-timer.C:
		}
		r := job.killAfter(t, 0)
		if !r.killed {
			t.Fatalf("run %d of the job ended before its kill: %s\n%s", runs, r, tail(job.log.Name()))
		}
		kills++
		t.Logf("run %d killed after %v (%d requests answered so far)", runs, r.took.Round(time.Millisecond), answered.Load())
		job = startJob()
	}
	if kills < minKills {
		t.Fatalf("the job was killed %d times, want at least %d", kills, minKills)
	}

	mu.Lock()
	var missing []int
	dups := 0
	for n := range httpEvents {
		switch c := got[n]; {
		case c == 0:
			missing = append(missing, n)
		case c > 1:
			dups += c - 1
		}
	}
	for n := range got {
		if n < 0 || n >= httpEvents {
			t.Errorf("the receiver got %d, which was never sent", n)
		}
	}
	mu.Unlock()
	if len(missing) > 0 {
		if len(missing) > 20 {
			missing = append(missing[:20], -1)
		}
		t.Fatalf("%d of %d numbers never reached the receiver though answered 200 (first: %v, -1 = more)\n%s", len(missing), httpEvents, missing, tail(job.log.Name()))
	}
	if n := early.Load(); n > 0 {
		t.Errorf("%d numbers were answered 200 before they reached the receiver", n)
	}
	t.Logf("%d numbers in %d requests (%d attempts: %d connection errors, %d answered 503) through %d kills: none lost, %d duplicates; the receiver refused %d requests",
		httpEvents, answered.Load(), attempts.Load(), connErrs.Load(), unavailable.Load(), kills, dups, refusals.Load())
	job.cmd.Process.Signal(os.Interrupt)
	if r := job.wait(t, time.Minute); !r.ok() {
		t.Errorf("the job did not stop cleanly: %s\n%s", r, tail(job.log.Name()))
	}
}
