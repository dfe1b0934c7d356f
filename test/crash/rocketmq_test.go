package crash_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicesql/sluice/internal/rocketmqfake"
)

const (
	// rmqRows of the crash test's input go to the RocketMQ topic rin,
	// each to the queue of its partition (4 queues of uneven sizes), and
	// the first rmqReceiveRows of them to rin2 (round-robin) for the
	// receive job, which is slower: a transactional message per row.
	rmqRows        = 200_000
	rmqReceiveRows = 50_000
	// rmqMinKills is how many times each RocketMQ job must be killed.
	rmqMinKills = 3
	// rmqPlannedKills is how many kills the schedule plans.
	rmqPlannedKills = 5
)

// rmqJobs are the RocketMQ crash test's jobs; ${EP} is the proxy's
// endpoints, ${STATE} the job's state directory, ${NAME} its name.
var rmqJobs = map[string]string{
	// Read by queue offsets, resumed after the checkpoint's offsets: the
	// window aggregation's state is exactly-once, and so is its output
	// through the transactional sink.
	"offsets": `
SET 'state.dir' = '${STATE}';
SET 'pipeline.name' = '${NAME}';
SET 'execution.checkpointing.interval' = '100ms';
CREATE TABLE events (id BIGINT, ts TIMESTAMP(3), k STRING, v BIGINT, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)
  WITH ('connector' = 'rocketmq', 'endpoints' = '${EP}', 'topic' = 'rin', 'scan.mode' = 'offsets',
    'scan.bounded.mode' = 'latest-offset', 'format' = 'json');
CREATE TABLE rout (window_start TIMESTAMP(3), window_end TIMESTAMP(3), k STRING, n BIGINT, total BIGINT, lo BIGINT, hi BIGINT)
  WITH ('connector' = 'rocketmq', 'endpoints' = '${EP}', 'topic' = 'rout', 'format' = 'json',
    'sink.delivery-guarantee' = 'exactly-once');
INSERT INTO rout
SELECT window_start, window_end, k, COUNT(*), SUM(v), MIN(v), MAX(v)
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND))
GROUP BY window_start, window_end, k;`,
	// Received as a consumer group, acknowledged after checkpoints: what
	// a killed run received and had not acknowledged comes again once its
	// invisible time ends (at-least-once), through a filter into the
	// transactional sink.
	"receive": `
SET 'state.dir' = '${STATE}';
SET 'pipeline.name' = '${NAME}';
SET 'execution.checkpointing.interval' = '100ms';
CREATE TABLE events (id BIGINT, ts TIMESTAMP(3), k STRING, v BIGINT)
  WITH ('connector' = 'rocketmq', 'endpoints' = '${EP}', 'topic' = 'rin2', 'consumer-group' = 'crash',
    'scan.invisible-duration' = '5s', 'scan.receive.await' = '500ms', 'format' = 'json');
CREATE TABLE rfilter (id BIGINT, k STRING, v BIGINT)
  WITH ('connector' = 'rocketmq', 'endpoints' = '${EP}', 'topic' = 'rfilter', 'format' = 'json',
    'sink.delivery-guarantee' = 'exactly-once');
INSERT INTO rfilter SELECT id, UPPER(k), v FROM events WHERE MOD(v, 4) <> 0;`,
}

// TestCrashRocketMQ is the crash test of the RocketMQ connector: jobs
// reading a topic of an in-process RocketMQ stand-in (package
// rocketmqfake, in the test's own process, so that it outlives the jobs)
// and writing through the transactional sink are killed with SIGKILL at
// random moments and restarted:
//
//   - "offsets" reads by queue offsets into a window aggregation and
//     ends by itself (bounded): its committed output must equal what Go
//     computes from the input, with no duplicate (exactly-once);
//   - "receive" receives as a consumer group through a filter; after the
//     kills a last run goes on until every row that passes the filter is
//     in the output: each must be there, at least once (at-least-once:
//     a message received after the last completed checkpoint of a killed
//     run comes again), and nothing else.
//
// It takes about a minute and runs only when asked:
//
//	SLUICE_CRASH_TEST=1 go test -count=1 -run RocketMQ ./test/crash
func TestCrashRocketMQ(t *testing.T) {
	rng, dir := crashSetup(t, 0x70c3e7, "rocketmq")
	bin := buildSluice(t, dir, os.Getenv("SLUICE_CRASH_RACE") == "1")
	flog, err := os.Create(filepath.Join(dir, "proxy.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer flog.Close()
	fake, err := rocketmqfake.Start(rocketmqfake.Options{TransactionCheckAfter: 500 * time.Millisecond,
		TransactionCheckInterval: 250 * time.Millisecond, TransactionCheckMax: 1000,
		Logf: func(format string, args ...any) { fmt.Fprintf(flog, format+"\n", args...) }})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	if err := fake.CreateTopic("", "rin", inputParts); err != nil {
		t.Fatal(err)
	}
	in := genInput(rng)[:rmqRows]
	for i, e := range in {
		if _, _, err := fake.Publish("", "rin", e.part, rocketmqfake.Message{Body: e.json()}); err != nil {
			t.Fatal(err)
		}
		if i < rmqReceiveRows {
			if _, _, err := fake.Publish("", "rin2", -1, rocketmqfake.Message{Body: e.json()}); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Run("offsets", func(t *testing.T) {
		runRMQJob(t, fake, bin, dir, "offsets", rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64())), func() bool { return false })
		var got []*kgo.Record
		for _, m := range fake.Messages("rout") {
			got = append(got, &kgo.Record{Value: m.Body})
		}
		gotSet, err := canonOutput(jobs[0], got)
		if err != nil {
			t.Fatal(err)
		}
		want := expectWindow(in)
		minus, plus := diffMultisets(want, gotSet)
		if len(minus) > 0 || len(plus) > 0 {
			short, full := formatDiff(want, gotSet, minus, plus)
			t.Errorf("the output differs from the input's windows (%d rows lost, %d extra or doubled):\n%s\n(full diff: %s)",
				len(minus), len(plus), short, saveDiff(t, dir, "rocketmq-offsets", full))
		}
		t.Logf("%d windows, exact; %d half messages left unresolved (not visible)", len(got), fake.HalfMessages("rout"))
	})
	t.Run("receive", func(t *testing.T) {
		want := map[int64]bool{}
		for _, e := range in[:rmqReceiveRows] {
			if e.v%4 != 0 {
				want[e.id] = true
			}
		}
		seen := func() (map[int64]int, error) {
			out := map[int64]int{}
			for _, m := range fake.Messages("rfilter") {
				var row struct {
					ID int64 `json:"id"`
				}
				if err := json.Unmarshal(m.Body, &row); err != nil {
					return nil, fmt.Errorf("output message %q: %v", m.Body, err)
				}
				out[row.ID]++
			}
			return out, nil
		}
		// The last run does not end by itself: it is done once every row
		// that passes the filter is in the output.
		complete := func() bool {
			s, err := seen()
			return err == nil && len(s) >= len(want)
		}
		runRMQJob(t, fake, bin, dir, "receive", rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64())), complete)
		s, err := seen()
		if err != nil {
			t.Fatal(err)
		}
		var lost, extra []int64
		dups := 0
		for id := range want {
			if s[id] == 0 {
				lost = append(lost, id)
			}
		}
		for id, n := range s {
			if !want[id] {
				extra = append(extra, id)
			}
			dups += n - 1
		}
		if len(lost) > 0 || len(extra) > 0 {
			t.Errorf("%d rows lost (e.g. %v), %d that do not pass the filter (e.g. %v)", len(lost), first(lost), len(extra), first(extra))
		}
		t.Logf("%d rows, each at least once; %d delivered again after a kill (at-least-once)", len(want), dups)
	})
}

func first(ids []int64) []int64 { return ids[:min(len(ids), 5)] }

// runRMQJob runs job until a run ends by itself (or, for a job that does
// not end, until done says its output is complete), killing it with
// SIGKILL at random moments rmqPlannedKills times first.
func runRMQJob(t *testing.T, fake *rocketmqfake.Server, bin, dir, job string, rng *rand.Rand, done func() bool) {
	t.Helper()
	text := strings.NewReplacer("${EP}", fake.Addr(), "${STATE}", filepath.Join(dir, job+"-state"), "${NAME}", "rmq-"+job).Replace(rmqJobs[job])
	sqlPath := filepath.Join(dir, "rmq-"+job+".sql")
	if err := os.WriteFile(sqlPath, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	kills := 0
	var plan []string
	for run := 0; ; run++ {
		logPath := filepath.Join(dir, fmt.Sprintf("rmq-%s-run%d.log", job, run))
		p := startJob(t, bin, sqlPath, logPath)
		var r runResult
		if kills < rmqPlannedKills {
			// The first kill may come while the job starts; the others
			// once it has had time to read, checkpoint and commit.
			delay := time.Duration(300+rng.IntN(1200)) * time.Millisecond
			if run == 0 {
				delay = time.Duration(rng.IntN(400)) * time.Millisecond
			}
			plan = append(plan, delay.String())
			r = p.killAfter(t, delay)
		} else {
			r = p.waitFor(t, runTimeout, done)
		}
		t.Logf("%s run %d %s", job, run, r)
		if r.killed {
			kills++
			continue
		}
		if !r.ok() {
			t.Fatalf("run %d of %s %s\n%s", run, job, r, tail(logPath))
		}
		break
	}
	t.Logf("%s: killed %d times (after %s)", job, kills, strings.Join(plan, ", "))
	if kills < rmqMinKills {
		t.Fatalf("%s ran to its end after %d kills, fewer than %d: the input is too small for this machine", job, kills, rmqMinKills)
	}
}

// waitFor waits for the run to end by itself, or, polling, for done to
// hold (it then stops the run with SIGKILL: a run that does not end has
// nothing more to do), failing after timeout.
func (p *proc) waitFor(t *testing.T, timeout time.Duration, done func() bool) runResult {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-p.done:
			return p.result(false)
		case <-tick.C:
		}
		if done() {
			p.cmd.Process.Kill()
			<-p.done
			return runResult{took: time.Since(p.start)}
		}
		if time.Now().After(deadline) {
			p.cmd.Process.Kill()
			<-p.done
			return runResult{took: time.Since(p.start), err: fmt.Errorf("did not finish within %v and was killed", timeout)}
		}
	}
}
