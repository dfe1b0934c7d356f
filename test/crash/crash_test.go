// Package crash_test is the crash test of Sluice's exactly-once Kafka
// pipeline: separate `sluice run` processes whose state lives in Kafka are
// killed with SIGKILL at random moments and restarted, and their committed
// output must equal, row for row, the output of an uninterrupted run of the
// same job.
//
// The test starts `sluice dev kafka` as its own process (the broker must
// outlive the jobs it kills), produces a known input (a million rows over
// four partitions of uneven sizes) and for every job of jobs:
//
//  1. runs it once without interruption into its own output topic: the
//     reference, which must also match what plain Go code computes from
//     the input;
//  2. runs it again under another sink table name (a new job name, so a
//     fresh state, changelog and transactional ID) into another topic,
//     killing the process with SIGKILL at least minKills times and
//     restarting it until a run ends by itself. Kills come at random
//     moments, drawn from a logged seed: some while the process starts,
//     the others a random delay after the job has committed a random
//     share of the input it had left (a watcher tails the job's
//     changelog), so that they follow the job's progress whatever the
//     speed of the machine;
//  3. reads both topics as a read-committed consumer and compares them:
//     append jobs as multisets of records, the upsert job by the final
//     value of every key. Neither output may hold a duplicate.
//
// It takes about a minute (about three with -race) and needs nothing but
// Go, so it runs only when asked:
//
//	SLUICE_CRASH_TEST=1 go test -count=1 -v -timeout 15m ./test/crash
//
// SLUICE_CRASH_SEED=n repeats a run's input and kill plan (the moments
// still depend on timing); SLUICE_CRASH_RACE=1 builds the sluice binary
// with the race detector (much slower); SLUICE_CRASH_DIR=dir keeps the
// binary, the jobs' SQL, the log of every run and the full diffs of a
// failure in dir instead of a temporary directory.
package crash_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicesql/sluice/internal/kafkatest"
)

const (
	// inputRows rows over inputParts partitions form the input topic.
	inputRows  = 1_000_000
	inputParts = 4
	// numKeys distinct values of the grouping column k.
	numKeys = 500
	// minKills is how many times every job must be killed during its
	// crash run.
	minKills = 5
	// plannedKills is how many kills the schedule plans; a run that ends
	// by itself before them stops the killing early, and fewer than
	// minKills actual kills fail the test.
	plannedKills = 7
	// startupKillWithin bounds the delay of a startup kill.
	startupKillWithin = 150 * time.Millisecond
	// checkpointInterval is the jobs' 'execution.checkpointing.interval'.
	checkpointInterval = 100 * time.Millisecond
	// runTimeout bounds one run of a job so that a job that never ends
	// fails the test instead of hanging it. It is a guard, not a
	// measurement.
	runTimeout = 3 * time.Minute
	// inputTopic is the topic source.sql reads.
	inputTopic = "events"
)

// eventBase is where the input's event times begin.
var eventBase = time.Date(2020, 4, 15, 8, 0, 0, 0, time.UTC)

// event is one input row.
type event struct {
	id   int64
	part int32
	ts   time.Time
	k    string
	v    int64
}

// crashJob is one job the test crashes.
type crashJob struct {
	// name names the SQL template testdata/<name>.sql and the job's
	// topics.
	name string
	// upsert: the sink is upsert-kafka, compared by the final value per
	// key; otherwise the output is an append stream compared as a
	// multiset of records.
	upsert bool
	// expect computes, from the input, the job's output in canonical form:
	// for an append job the multiset of rows, for an upsert job the final
	// row per key (the key's canonical form → the row's).
	expect func(in []event) map[string]int
	// canon turns an output record into the canonical form of expect.
	canon func(r *kgo.Record) (string, error)
	// rowKey, for an append job, is what no two of its output rows share.
	rowKey func(value []byte) (string, error)
	// rowID, if set, finds the input row (its id) an output record's
	// value came from, so that a diff can say which input it lost.
	rowID func(value string) (int64, bool)
}

// jobs are the crashed jobs.
var jobs = []crashJob{
	{name: "window", expect: expectWindow, canon: canonWindow, rowKey: windowKey},
	{name: "groupby", upsert: true, expect: expectGroupBy, canon: canonGroupBy},
	{name: "filter", expect: expectFilter, canon: canonFilter, rowKey: filterKey, rowID: filterRowID},
	{name: "join", expect: expectJoin, canon: canonJoin, rowKey: filterKey, rowID: filterRowID},
	{name: "rules", expect: expectRules, canon: canonRules, rowKey: rulesKey, rowID: filterRowID},
	{name: "suppress", expect: expectSuppress, canon: canonSuppress, rowKey: filterKey, rowID: filterRowID},
	{name: "metrics", expect: expectMetrics, canon: canonMetrics, rowKey: filterKey, rowID: filterRowID},
}

// expectSuppress is what testdata/suppress.sql's ruleset lets through:
// per partition and k, the first alert, then the first at least a
// minute after the last one let through, with the number suppressed
// between them: id|part|k|v|n.
func expectSuppress(in []event) map[string]int {
	type open struct {
		start time.Time
		n     int
	}
	sets := map[string]*open{}
	m := map[string]int{}
	for _, e := range in {
		if !(e.v >= 90 || e.v < 10 && e.v%2 == 1) {
			continue
		}
		key := fmt.Sprintf("%d/%s", e.part, e.k)
		o := sets[key]
		switch {
		case o == nil:
			sets[key] = &open{start: e.ts}
			m[fmt.Sprintf("%d|%d|%s|%d|0", e.id, e.part, e.k, e.v)]++
		case e.ts.Before(o.start.Add(time.Minute)):
			o.n++
		default:
			m[fmt.Sprintf("%d|%d|%s|%d|%d", e.id, e.part, e.k, e.v, o.n)]++
			o.start, o.n = e.ts, 0
		}
	}
	return m
}

// expectMetrics is what testdata/metrics.sql writes: id|part|n|sum_1s|
// max_10s for every fourth row, the metrics of its partition after it
// (each partition's rows in the order produced, which is the order of
// their ids, their times rising).
func expectMetrics(in []event) map[string]int {
	m := map[string]int{}
	type part struct {
		n      int64
		frame  []event
		window int64
		max    int64
	}
	parts := map[int32]*part{}
	for _, e := range in {
		p := parts[e.part]
		if p == nil {
			p = &part{window: -1}
			parts[e.part] = p
		}
		p.n++
		p.frame = append(p.frame, e)
		for p.frame[0].ts.Before(e.ts.Add(-time.Second)) {
			p.frame = p.frame[1:]
		}
		sum := int64(0)
		for _, f := range p.frame {
			sum += f.v
		}
		if w := e.ts.Sub(eventBase).Milliseconds() / 10_000; w != p.window {
			p.window, p.max = w, e.v
		} else {
			p.max = max(p.max, e.v)
		}
		if e.id%4 == 0 {
			m[fmt.Sprintf("%d|%d|%d|%d|%d", e.id, e.part, p.n, sum, p.max)]++
		}
	}
	return m
}

func canonSuppress(r *kgo.Record) (string, error) {
	var row struct {
		ID, Part, V, N *int64
		K              string
	}
	if err := strictJSON(r.Value, &row, nil); err != nil {
		return "", err
	}
	if row.ID == nil || row.Part == nil || row.V == nil || row.N == nil {
		return "", errors.New("a column is missing or null")
	}
	return fmt.Sprintf("%d|%d|%s|%d|%d", *row.ID, *row.Part, row.K, *row.V, *row.N), nil
}

func canonMetrics(r *kgo.Record) (string, error) {
	var row struct {
		ID, Part, N, Sum_1s, Max_10s *int64
	}
	if err := strictJSON(r.Value, &row, map[string]string{"sum_1s": "Sum_1s", "max_10s": "Max_10s"}); err != nil {
		return "", err
	}
	if row.ID == nil || row.Part == nil || row.N == nil || row.Sum_1s == nil || row.Max_10s == nil {
		return "", fmt.Errorf("a column is missing or null in %s", r.Value)
	}
	return fmt.Sprintf("%d|%d|%d|%d|%d", *row.ID, *row.Part, *row.N, *row.Sum_1s, *row.Max_10s), nil
}

// expectRules is what testdata/rules.sql's rules keep: rule|id|k|v.
func expectRules(in []event) map[string]int {
	m := map[string]int{}
	for _, e := range in {
		n, _ := strconv.Atoi(strings.TrimPrefix(e.k, "k"))
		for _, r := range []struct {
			name string
			keep bool
		}{
			{"a", strings.Contains(e.k, "7")},
			{"b", e.k == "k1" || e.k == "k22" || e.k == "k333" || e.k == "k400"},
			{"c", n%10 == 3 && e.v >= 50},
			{"d", e.v < 5 && strings.HasPrefix(e.k, "k1")},
			{"e", e.k == "k42" || e.v == 99},
		} {
			if r.keep {
				m[fmt.Sprintf("%s|%d|%s|%d", r.name, e.id, e.k, e.v)]++
			}
		}
	}
	return m
}

func canonRules(r *kgo.Record) (string, error) {
	var row struct {
		Rule string
		ID   *int64
		K    string
		V    *int64
	}
	if err := strictJSON(r.Value, &row, nil); err != nil {
		return "", err
	}
	if row.ID == nil || row.V == nil {
		return "", fmt.Errorf("missing id or v in %s", r.Value)
	}
	return fmt.Sprintf("%s|%d|%s|%d", row.Rule, *row.ID, row.K, *row.V), nil
}

// rulesKey: a row is its rule's and its input's.
func rulesKey(value []byte) (string, error) {
	var row struct {
		Rule string
		ID   int64
	}
	err := json.Unmarshal(value, &row)
	return fmt.Sprintf("%s/%d", row.Rule, row.ID), err
}

// paymentsTopic is the join job's second input: a payment for every third
// event, in the partition of its id.
const paymentsTopic = "payments"

// payment is the payment of event e, if it has one.
func payment(e event) (amount int64, ok bool) { return e.id%1000 + 1, e.id%3 == 0 }

func expectJoin(in []event) map[string]int {
	m := map[string]int{}
	for _, e := range in {
		if amount, ok := payment(e); ok {
			m[fmt.Sprintf("%d|%s|%d|%d", e.id, e.k, e.v, amount)]++
		}
	}
	return m
}

func canonJoin(r *kgo.Record) (string, error) {
	var row struct {
		ID, V, Amount *int64
		K             string
	}
	if err := strictJSON(r.Value, &row, nil); err != nil {
		return "", err
	}
	if row.ID == nil || row.V == nil || row.Amount == nil {
		return "", errors.New("a column is missing or null")
	}
	return fmt.Sprintf("%d|%s|%d|%d", *row.ID, row.K, *row.V, *row.Amount), nil
}

// crashSetup skips a crash test unless asked for, and returns its random
// source (seeded from SLUICE_CRASH_SEED, or logged for repeating) and its
// work directory (SLUICE_CRASH_DIR/sub, kept after the test, or a
// temporary one).
func crashSetup(t *testing.T, stream uint64, sub string) (*rand.Rand, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("the crash test is long; it does not run with -short")
	}
	if os.Getenv("SLUICE_CRASH_TEST") != "1" {
		t.Skip("set SLUICE_CRASH_TEST=1 to run the crash test")
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("SLUICE_CRASH_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("SLUICE_CRASH_SEED=%q: %v", s, err)
		}
	}
	t.Logf("seed %d (repeat with SLUICE_CRASH_SEED=%d)", seed, seed)
	dir := t.TempDir()
	if d := os.Getenv("SLUICE_CRASH_DIR"); d != "" {
		dir = filepath.Join(d, sub) // kept after the test, for the logs
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return rand.New(rand.NewPCG(seed, stream)), dir
}

func TestCrash(t *testing.T) {
	rng, dir := crashSetup(t, 0x5eed, "")
	t.Logf("work directory %s: the binary, the jobs' SQL and the logs of every run", dir)
	bin := buildSluice(t, dir, os.Getenv("SLUICE_CRASH_RACE") == "1")
	topics := []string{fmt.Sprintf("%s:%d", inputTopic, inputParts)}
	for _, j := range jobs {
		topics = append(topics, j.name+"-ref:2", j.name+"-crash:2")
	}
	for _, name := range clusterJobs {
		topics = append(topics, name+"-cluster:2", fmt.Sprintf("%s-%s:%d", clusterInput, name, inputParts))
	}
	topics = append(topics, fmt.Sprintf("%s:%d", paymentsTopic, inputParts))
	bs := startBroker(t, bin, dir, topics)
	t.Logf("broker at %s", bs)

	in := genInput(rng)
	recs := make([]*kgo.Record, len(in))
	for i, e := range in {
		recs[i] = &kgo.Record{Partition: e.part, Value: e.json()}
	}
	start := time.Now()
	kafkatest.ProduceTo(t, bs, inputTopic, recs...)
	sizes := make([]int, inputParts)
	for _, e := range in {
		sizes[e.part]++
	}
	t.Logf("produced %d rows in %v: %v rows in partitions 0..%d", len(in), time.Since(start).Round(time.Millisecond), sizes, inputParts-1)
	var pays []*kgo.Record
	for _, e := range in {
		if amount, ok := payment(e); ok {
			pays = append(pays, &kgo.Record{Partition: int32(e.id % inputParts), Value: fmt.Appendf(nil, `{"id":%d,"amount":%d}`, e.id, amount)})
		}
	}
	kafkatest.ProduceTo(t, bs, paymentsTopic, pays...)
	t.Logf("produced %d payments", len(pays))

	for _, j := range jobs {
		t.Run(j.name, func(t *testing.T) {
			runCrashJob(t, j, bin, dir, bs, in, rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64())))
		})
	}
	for _, name := range clusterJobs {
		j := jobs[slices.IndexFunc(jobs, func(j crashJob) bool { return j.name == name })]
		t.Run("cluster-"+name, func(t *testing.T) {
			runClusterJob(t, j, bin, dir, bs, in, rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64())))
		})
	}
}

const (
	// clusterMembers is how many processes share the cluster job.
	clusterMembers = 3
	// clusterInput, followed by the job's name, is a cluster job's input
	// topic, produced while the members run.
	clusterInput = "events-cluster"
	// clusterChunks is how many parts of the input are produced, one
	// every clusterChunkEvery.
	clusterChunks     = 40
	clusterChunkEvery = 250 * time.Millisecond
)

// clusterJobs are the jobs run in cluster mode, by name: a windowed
// aggregate behind one shuffle, and a regular join whose two inputs share
// one.
var clusterJobs = []string{"window", "join"}

// runClusterJob runs job j in cluster mode: clusterMembers
// processes share its partitions (of the input and of its shuffle topic)
// through a consumer group, reading an unbounded copy of the input that is
// produced, part by part, while they run (a join's payments are all there
// from the start). One member at a time is killed
// with SIGKILL at random moments and restarted; the partitions of a killed
// member move to the others with their state, and come back when it
// rejoins. After the input, one row a day later on every partition closes
// every window; once the committed output is the one computed from the
// input, the members are stopped (SIGTERM) and the output must not change:
// no duplicate, no late row.
func runClusterJob(t *testing.T, j crashJob, bin, dir, bs string, in []event, rng *rand.Rand) {
	input, output, group := clusterInput+"-"+j.name, j.name+"-cluster", j.name+"-cluster"
	sqlPath := writeJobSQL(t, dir, j.name, j.name+"_cluster", output, bs)
	src, err := os.ReadFile(sqlPath)
	if err != nil {
		t.Fatal(err)
	}
	// The events come while the members run; every input is unbounded.
	text := strings.Replace(string(src), "'topic' = 'events'", "'topic' = '"+input+"'", 1)
	text = strings.ReplaceAll(text, "'scan.bounded.mode' = 'latest-offset',", "")
	if err := os.WriteFile(sqlPath, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	start := func(m, run int) *proc {
		log := filepath.Join(dir, fmt.Sprintf("cluster-%s-m%d-%d.log", j.name, m, run))
		return startProc(t, log, bin, "run",
			// A member stopped at the end hands over and commits a large
			// state: on a busy machine that takes longer than the
			// default.
			"--stop-timeout", "3m",
			"-D", "cluster.group-id="+group,
			"-D", fmt.Sprintf("cluster.instance-id=m%d", m),
			"-D", "cluster.session-timeout=6s", // the broker's least
			"-D", "cluster.transaction-timeout=10s",
			sqlPath)
	}
	members := make([]*proc, clusterMembers)
	runs := make([]int, clusterMembers)
	for m := range members {
		runs[m] = 1
		members[m] = start(m, 1)
	}
	check := func(m int) {
		t.Helper()
		select {
		case <-members[m].done:
			r := members[m].result(false)
			t.Fatalf("member %d, run %d ended by itself: %s\n%s", m, runs[m], r, tail(members[m].log.Name()))
		default:
		}
	}

	// Produce the input part by part, in the background.
	began := time.Now()
	produced := make(chan struct{})
	go func() {
		defer close(produced)
		for c := range clusterChunks {
			lo, hi := c*len(in)/clusterChunks, (c+1)*len(in)/clusterChunks
			recs := make([]*kgo.Record, 0, hi-lo)
			for _, e := range in[lo:hi] {
				recs = append(recs, &kgo.Record{Partition: e.part, Value: e.json()})
			}
			kafkatest.ProduceTo(t, bs, input, recs...)
			time.Sleep(clusterChunkEvery)
		}
		var closing []*kgo.Record
		for p := range int32(inputParts) {
			e := event{id: -1, part: p, ts: eventBase.Add(24 * time.Hour), k: "closing", v: 0}
			closing = append(closing, &kgo.Record{Partition: p, Value: e.json()})
		}
		kafkatest.ProduceTo(t, bs, input, closing...)
	}()

	// Kill while the input comes.
	kills := 0
	for kills < plannedKills {
		time.Sleep(time.Duration(300+rng.IntN(1200)) * time.Millisecond)
		m := rng.IntN(clusterMembers)
		check(m)
		if err := members[m].cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-members[m].done
		r := members[m].result(true)
		if !r.killed {
			t.Fatalf("member %d, run %d: %s\n%s", m, runs[m], r, tail(members[m].log.Name()))
		}
		kills++
		t.Logf("kill %d: member %d, run %d, after %v (%v since the start)", kills, m, runs[m], r.took.Round(time.Millisecond), time.Since(began).Round(time.Millisecond))
		time.Sleep(time.Duration(rng.IntN(1000)) * time.Millisecond)
		runs[m]++
		members[m] = start(m, runs[m])
	}
	<-produced
	t.Logf("input produced after %v, %d kills", time.Since(began).Round(time.Millisecond), kills)

	// Wait for the complete output; then stop the members.
	want := j.expect(in)
	deadline := time.Now().Add(runTimeout)
	for {
		got, err := canonOutput(j, kafkatest.ReadAll(t, bs, output))
		if err != nil {
			t.Fatal(err)
		}
		minus, plus := diffMultisets(want, got)
		if len(minus)+len(plus) == 0 {
			break
		}
		if len(plus) > 0 || time.Now().After(deadline) {
			d, full := formatDiff(want, got, minus, plus)
			t.Fatalf("the cluster job's output differs from the one computed from the input (- computed, + cluster):\n%s%s\nthe members' logs:\n%s",
				d, saveDiff(t, dir, j.name+"-cluster-vs-computed.diff", full), memberLogs(dir, j.name))
		}
		for m := range members {
			check(m)
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("complete output after %v", time.Since(began).Round(time.Millisecond))
	for m, p := range members {
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if r := p.wait(t, runTimeout); !r.ok() {
			t.Fatalf("member %d, run %d, stopped: %s\n%s", m, runs[m], r, tail(p.log.Name()))
		}
	}
	recs := kafkatest.ReadAll(t, bs, output)
	if d := duplicates(j, recs); d != "" {
		t.Errorf("the cluster job's output has duplicates:\n%s", d)
	}
	got, err := canonOutput(j, recs)
	if err != nil {
		t.Fatal(err)
	}
	if minus, plus := diffMultisets(want, got); len(minus)+len(plus) > 0 {
		d, full := formatDiff(want, got, minus, plus)
		t.Errorf("after the members stopped, the output differs (- computed, + cluster):\n%s%s",
			d, saveDiff(t, dir, j.name+"-cluster-vs-computed.diff", full))
	}
	t.Logf("cluster run: %d kills, %v in all", kills, time.Since(began).Round(time.Millisecond))
}

// runCrashJob runs j uninterrupted, then with kills, and compares.
func runCrashJob(t *testing.T, j crashJob, bin, dir, bs string, in []event, rng *rand.Rand) {
	refTopic, crashTopic := j.name+"-ref", j.name+"-crash"
	refSQL := writeJobSQL(t, dir, j.name, j.name+"_ref", refTopic, bs)
	crashSQL := writeJobSQL(t, dir, j.name, j.name+"_crash", crashTopic, bs)

	// The reference: one run to its end.
	log := filepath.Join(dir, j.name+"-ref.log")
	p := startJob(t, bin, refSQL, log)
	ref := p.wait(t, runTimeout)
	if !ref.ok() {
		t.Fatalf("the uninterrupted run of job %s %s\n%s", j.name, ref, tail(log))
	}
	t.Logf("uninterrupted run: %v: %s", ref.took.Round(time.Millisecond), summary(log))

	// The crash run: kill, restart, until a run ends by itself. A watcher
	// tails the job's changelog for the input rows its checkpoints have
	// committed, so that kills follow the job's progress rather than a
	// guess of its speed (the machine may be busy with other work).
	w := watchChangelog(t, bs, j.name+"_crash")
	startups := rng.Perm(minKills)[:2]
	var kills []killRecord
	crashStart := time.Now()
	for attempt := 1; ; attempt++ {
		log := filepath.Join(dir, fmt.Sprintf("%s-crash-%d.log", j.name, attempt))
		if len(kills) >= plannedKills {
			res := startJob(t, bin, crashSQL, log).wait(t, runTimeout)
			if !res.ok() {
				t.Fatalf("job %s, run %d after %d kills: %s\nkills:\n%s\n%s", j.name, attempt, len(kills), res, killList(kills), tail(log))
			}
			t.Logf("run %d ended by itself after %v: %s", attempt, res.took.Round(time.Millisecond), summary(log))
			break
		}
		done, _ := committedInput(t, bs, j.name+"_crash")
		k := nextKill(rng, len(kills), startups, done)
		k.run, k.doneBefore = attempt, done
		p := startJob(t, bin, crashSQL, log)
		var res runResult
		if k.startup {
			res = p.killAfter(t, k.delay)
		} else {
			res = p.killAt(t, w, k.target, k.delay, runTimeout)
		}
		if res.killed {
			k.after, k.at = res.took, time.Since(crashStart)
			k.doneAfter, k.positions = committedInput(t, bs, j.name+"_crash")
			kills = append(kills, k)
			t.Logf("kill %d: %s", len(kills), k)
			continue
		}
		if !res.ok() {
			t.Fatalf("job %s, run %d after %d kills: %s\nkills:\n%s\n%s", j.name, attempt, len(kills), res, killList(kills), tail(log))
		}
		t.Logf("run %d ended by itself after %v, before its kill (%s): %s", attempt, res.took.Round(time.Millisecond), k.plan(), summary(log))
		break
	}
	if len(kills) < minKills {
		t.Errorf("job %s ended after only %d kills, want at least %d:\n%s", j.name, len(kills), minKills, killList(kills))
	}
	t.Logf("crash run: %d kills, %v in all", len(kills), time.Since(crashStart).Round(time.Millisecond))

	refRecs := kafkatest.ReadAll(t, bs, refTopic)
	crashRecs := kafkatest.ReadAll(t, bs, crashTopic)
	t.Logf("committed records: uninterrupted %d, crashed %d", len(refRecs), len(crashRecs))
	if len(refRecs) == 0 {
		t.Fatalf("job %s: the uninterrupted run committed no output\n%s", j.name, tail(filepath.Join(dir, j.name+"-ref.log")))
	}
	ctx := fmt.Sprintf("job %s, kills:\n%s", j.name, killList(kills))

	// The uninterrupted run must itself be right.
	want := j.expect(in)
	if got, err := canonOutput(j, refRecs); err != nil {
		t.Errorf("job %s, uninterrupted run: %v", j.name, err)
	} else if minus, plus := diffMultisets(want, got); len(minus)+len(plus) > 0 {
		d, full := formatDiff(want, got, minus, plus)
		t.Errorf("job %s: the uninterrupted run's output differs from the one computed from the input (- computed, + uninterrupted run):\n%s%s",
			j.name, d, saveDiff(t, dir, j.name+"-ref-vs-computed.diff", full))
	}
	for _, o := range []struct {
		name string
		recs []*kgo.Record
	}{{"uninterrupted", refRecs}, {"crashed", crashRecs}} {
		if d := duplicates(j, o.recs); d != "" {
			t.Errorf("job %s: the %s run's output has duplicates:\n%s", j.name, o.name, d)
		}
	}

	// The crashed run must equal the uninterrupted one.
	if j.upsert {
		want, got := finalPerKey(refRecs), finalPerKey(crashRecs)
		if minus, plus := diffMultisets(want, got); len(minus)+len(plus) > 0 {
			d, full := formatDiff(want, got, minus, plus)
			t.Errorf("%s\nthe final values per key differ (- uninterrupted, + crashed):\n%s%s", ctx, d, saveDiff(t, dir, j.name+"-crash-vs-ref.diff", full))
		}
	} else {
		want, got := multiset(refRecs), multiset(crashRecs)
		minus, plus := diffMultisets(want, got)
		if len(minus)+len(plus) > 0 {
			d, full := formatDiff(want, got, minus, plus)
			if j.rowID != nil {
				d += fmt.Sprintf("input rows of the missing output rows: %s\ninput rows of the extra output rows: %s\n",
					byPartition(in, minus, j.rowID), byPartition(in, plus, j.rowID))
			}
			t.Errorf("%s\nthe committed outputs differ (- uninterrupted, + crashed):\n%s%s", ctx, d, saveDiff(t, dir, j.name+"-crash-vs-ref.diff", full))
		}
	}
}

// killRecord is one kill of a crash run: planned, then what happened.
type killRecord struct {
	// A startup kill comes delay after the process started: while it
	// starts, fences its predecessor, restores its state, or (when little
	// input is left) finishes it. A progress kill comes delay after the
	// job has committed, by its checkpoints, target input rows: at a random
	// moment between two of its checkpoints.
	startup bool
	delay   time.Duration
	target  int64

	run        int           // the run killed (1 is the first)
	doneBefore int64         // input rows committed before the run
	doneAfter  int64         // and after the kill
	positions  string        // the committed positions after the kill
	after      time.Duration // since the run's start
	at         time.Duration // since the crash run's start
}

// nextKill plans kill i (0 is the first) of a crash run whose job has
// committed done input rows. Two of the first minKills kills (those in
// startups) are startup kills; the others wait for a random share of the
// input left, up to a quarter, so that the job cannot end before it has
// been killed minKills times, and fall back to a kill right after the
// start when less than half the input is left (a fast job
// would otherwise outrun the kills). Kills after the
// first minKills may wait for any share of the input left, or come
// after the end: the job may then end by itself. Once all the input is
// committed, kills come at random moments after the start.
func nextKill(rng *rand.Rand, i int, startups []int, done int64) killRecord {
	left := inputRows - done
	switch {
	case i < minKills && left < inputRows/2:
		return killRecord{startup: true, delay: time.Duration(rng.Int64N(int64(20 * time.Millisecond)))}
	case i < minKills && slices.Contains(startups, i):
		return killRecord{startup: true, delay: time.Duration(rng.Int64N(int64(startupKillWithin)))}
	case i < minKills:
		return killRecord{target: done + 1 + rng.Int64N(left/4), delay: time.Duration(rng.Int64N(int64(checkpointInterval / 2)))}
	case left == 0:
		// Every input row is committed, but the job has not ended: it is
		// firing its last windows or committing its end.
		return killRecord{startup: true, delay: time.Duration(rng.Int64N(int64(startupKillWithin)))}
	}
	return killRecord{target: done + 1 + rng.Int64N(left), delay: time.Duration(rng.Int64N(int64(checkpointInterval)))}
}

func (k killRecord) plan() string {
	if k.startup {
		return fmt.Sprintf("%v after the start", k.delay.Round(time.Millisecond))
	}
	return fmt.Sprintf("%v after %d input rows were committed", k.delay.Round(time.Millisecond), k.target)
}

func (k killRecord) String() string {
	return fmt.Sprintf("run %d killed %v after its start (%v into the crash run; planned %s); input rows committed before the run %d, after the kill %d of %d (positions %s)",
		k.run, k.after.Round(time.Millisecond), k.at.Round(time.Millisecond), k.plan(), k.doneBefore, k.doneAfter, inputRows, k.positions)
}

func killList(ks []killRecord) string {
	var b strings.Builder
	for i, k := range ks {
		fmt.Fprintf(&b, "  %d. %s\n", i+1, k)
	}
	if len(ks) == 0 {
		b.WriteString("  (none)\n")
	}
	return b.String()
}

// changelogWatcher tails a job's changelog (topic
// sluice-state-insert-into-<sink table>) as a read-committed consumer and
// keeps the positions of the last committed checkpoint: records keyed 'p'
// + source/partition, valued with the varint offset of the last row read
// in that partition. It steers the kill schedule only; it checks nothing.
type changelogWatcher struct {
	mu      sync.Mutex
	pos     map[string]int64
	changed chan struct{} // a token after every fetch that moved a position
}

// watchChangelog starts a watcher of the changelog of the job whose sink
// table is sink. The topic need not exist yet: the job creates it.
func watchChangelog(t *testing.T, bs, sink string) *changelogWatcher {
	topic := "sluice-state-insert-into-" + sink
	cl, err := kgo.NewClient(kgo.SeedBrokers(bs),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.FetchMaxWait(20*time.Millisecond),
		kgo.MetadataMinAge(20*time.Millisecond),
		kgo.MetadataMaxAge(100*time.Millisecond))
	if err != nil {
		t.Fatalf("cannot watch %s: %v", topic, err)
	}
	w := &changelogWatcher{pos: map[string]int64{}, changed: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		for ctx.Err() == nil {
			fs := cl.PollFetches(ctx)
			moved := false
			fs.EachRecord(func(r *kgo.Record) {
				if len(r.Key) < 2 || r.Key[0] != 'p' {
					return
				}
				if v, n := binary.Varint(r.Value); n > 0 {
					w.mu.Lock()
					w.pos[string(r.Key[1:])] = v
					w.mu.Unlock()
					moved = true
				}
			})
			if moved {
				select {
				case w.changed <- struct{}{}:
				default:
				}
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-exited
		cl.Close()
	})
	return w
}

// committed is the number of input rows the job's committed checkpoints
// cover, as far as the watcher has read.
func (w *changelogWatcher) committed() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	var sum int64
	for _, off := range w.pos {
		sum += off + 1
	}
	return min(sum, inputRows)
}

// committedInput reads the job's changelog to its last stable offset and
// returns the input rows its committed checkpoints cover, like
// changelogWatcher.committed but exact at the moment of the call, and the
// positions themselves ("source/partition:offset ...").
func committedInput(t *testing.T, bs, sink string) (int64, string) {
	topic := "sluice-state-insert-into-" + sink
	ctx, cancel := context.WithTimeout(context.Background(), kafkatest.Timeout)
	defer cancel()
	tds, err := kafkatest.Admin(t, bs).ListTopics(ctx, topic)
	if err != nil {
		t.Fatalf("cannot list topic %s: %v", topic, err)
	}
	if !tds.Has(topic) || tds[topic].Err != nil {
		return 0, "none" // not created yet: the first run was killed early
	}
	pos := map[string]int64{}
	for _, r := range kafkatest.ReadAll(t, bs, topic) {
		if len(r.Key) < 2 || r.Key[0] != 'p' {
			continue
		}
		if v, n := binary.Varint(r.Value); n > 0 {
			pos[string(r.Key[1:])] = v
		}
	}
	var sum int64
	var list []string
	for k, off := range pos {
		sum += off + 1
		list = append(list, fmt.Sprintf("%s:%d", k, off))
	}
	if len(list) == 0 {
		return 0, "none"
	}
	slices.Sort(list)
	return min(sum, inputRows), strings.Join(list, " ")
}

// summary is the job summary line a run printed, if any.
func summary(log string) string {
	b, _ := os.ReadFile(log)
	for l := range strings.Lines(string(b)) {
		if strings.HasPrefix(l, "job ") {
			return strings.TrimSpace(l)
		}
	}
	return "no job summary"
}

// genInput generates the input: rows with a unique id, random keys and
// values, and event times that increase by 0 to 4 ms from row to row
// starting at eventBase, spread over the partitions unevenly (4:3:2:1), so
// that every partition spans the whole time range (no row is late for a
// 5-second watermark) but the small ones are read to their end long before
// the large ones: a job runs with some partitions finished and others not.
func genInput(rng *rand.Rand) []event {
	out := make([]event, 0, inputRows)
	ts := eventBase
	for i := range inputRows {
		ts = ts.Add(time.Duration(rng.IntN(5)) * time.Millisecond)
		var p int32
		switch w := rng.IntN(10); {
		case w < 4:
			p = 0
		case w < 7:
			p = 1
		case w < 9:
			p = 2
		default:
			p = 3
		}
		out = append(out, event{
			id:   int64(i),
			part: p,
			ts:   ts,
			k:    "k" + strconv.Itoa(rng.IntN(numKeys)),
			v:    rng.Int64N(100),
		})
	}
	return out
}

func (e event) json() []byte {
	return fmt.Appendf(nil, `{"id":%d,"ts":"%s","k":"%s","v":%d}`, e.id, e.ts.Format("2006-01-02 15:04:05.000"), e.k, e.v)
}

// buildSluice builds the sluice command into dir.
func buildSluice(t *testing.T, dir string, race bool) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("cannot find the go command: %v", err)
	}
	bin := filepath.Join(dir, "sluice")
	args := []string{"build", "-o", bin}
	if race {
		args = append(args, "-race")
	}
	cmd := exec.Command(gobin, append(args, "github.com/sluicesql/sluice/cmd/sluice")...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cannot build the sluice binary: %v\n%s", err, out)
	}
	return bin
}

// startBroker runs `sluice dev kafka` on a free loopback port with the
// given topics and returns its bootstrap address. The broker is stopped
// (SIGTERM) when the test ends.
func startBroker(t *testing.T, bin, dir string, topics []string) string {
	t.Helper()
	args := []string{"dev", "kafka", "--port", "0"}
	for _, tp := range topics {
		args = append(args, "--topic", tp)
	}
	cmd := exec.Command(bin, args...)
	stderr, err := os.Create(filepath.Join(dir, "broker.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
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
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		first := true
		for sc.Scan() {
			if first {
				a, _ := strings.CutPrefix(sc.Text(), "Kafka-protocol cluster listening on ")
				addr <- a
				first = false
			}
		}
		if first {
			close(addr)
		}
	}()
	select {
	case a, ok := <-addr:
		if !ok || !strings.HasPrefix(a, "127.0.0.1:") {
			t.Fatalf("the broker did not print its address (got %q)\n%s", a, tail(filepath.Join(dir, "broker.log")))
		}
		return a
	case <-time.After(time.Minute):
		t.Fatalf("the broker did not start within a minute\n%s", tail(filepath.Join(dir, "broker.log")))
	}
	return ""
}

// writeJobSQL writes source.sql followed by the job's template, with the
// placeholders filled in, to a file in dir and returns its path.
func writeJobSQL(t *testing.T, dir, name, sink, topic, bs string) string {
	t.Helper()
	var src []byte
	for _, f := range []string{"source.sql", name + ".sql"} {
		b, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		src = append(append(src, b...), '\n')
	}
	text := strings.NewReplacer(
		"${BOOTSTRAP}", bs,
		"${PARALLELISM}", "2",
		"${CHECKPOINT_INTERVAL}", fmt.Sprintf("%dms", checkpointInterval.Milliseconds()),
		"${SINK}", sink,
		"${TOPIC}", topic,
	).Replace(string(src))
	if i := strings.Index(text, "${"); i >= 0 {
		t.Fatalf("testdata/%s.sql: unknown placeholder at %q", name, text[i:min(len(text), i+20)])
	}
	path := filepath.Join(dir, sink+".sql")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// proc is a running `sluice run`.
type proc struct {
	cmd   *exec.Cmd
	start time.Time
	done  chan struct{}
	err   error // of Wait, once done is closed
	log   *os.File
}

// runResult is how a run ended.
type runResult struct {
	took   time.Duration
	killed bool // by our SIGKILL
	code   int  // exit code, when not killed
	err    error
}

func (r runResult) ok() bool { return !r.killed && r.err == nil && r.code == 0 }

func (r runResult) String() string {
	switch {
	case r.killed:
		return fmt.Sprintf("was killed after %v", r.took)
	case r.err != nil:
		return fmt.Sprintf("failed after %v: %v", r.took, r.err)
	default:
		return fmt.Sprintf("exited with code %d after %v", r.code, r.took)
	}
}

// checkLog fails the test if a run's log reports a data race (a binary
// built with SLUICE_CRASH_RACE=1 reports them on standard error, killed
// or not).
func checkLog(t *testing.T, log string) {
	t.Helper()
	if b, _ := os.ReadFile(log); bytes.Contains(b, []byte("WARNING: DATA RACE")) {
		t.Errorf("%s reports a data race\n%s", filepath.Base(log), tail(log))
	}
}

// startJob starts `sluice run sqlPath`, its output going to logPath.
func startJob(t *testing.T, bin, sqlPath, logPath string) *proc {
	t.Helper()
	return startProc(t, logPath, bin, "run", sqlPath)
}

// startProc starts bin with args, its output going to logPath.
func startProc(t *testing.T, logPath, bin string, args ...string) *proc {
	t.Helper()
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	p := &proc{cmd: cmd, done: make(chan struct{}), log: f}
	p.start = time.Now()
	if err := cmd.Start(); err != nil {
		f.Close()
		t.Fatalf("cannot start sluice: %v", err)
	}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	t.Cleanup(func() { checkLog(t, logPath) })
	// Never leave a job running behind a failed test.
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// wait waits for the run to end by itself, killing it after timeout.
func (p *proc) wait(t *testing.T, timeout time.Duration) runResult {
	t.Helper()
	select {
	case <-p.done:
		return p.result(false)
	case <-time.After(timeout):
		p.cmd.Process.Kill()
		<-p.done
		return runResult{took: time.Since(p.start), err: fmt.Errorf("did not end within %v and was killed", timeout)}
	}
}

// killAfter sends SIGKILL after delay unless the run has ended by then.
func (p *proc) killAfter(t *testing.T, delay time.Duration) runResult {
	t.Helper()
	timer := time.NewTimer(delay - time.Since(p.start))
	defer timer.Stop()
	select {
	case <-p.done:
		return p.result(false)
	case <-timer.C:
	}
	sent := p.cmd.Process.Signal(syscall.SIGKILL) == nil
	<-p.done
	return p.result(sent)
}

// killAt sends SIGKILL delay after w sees target input rows committed,
// unless the run has ended by then; after timeout it kills the run and
// reports a failure.
func (p *proc) killAt(t *testing.T, w *changelogWatcher, target int64, delay, timeout time.Duration) runResult {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for w.committed() < target {
		select {
		case <-p.done:
			return p.result(false)
		case <-deadline.C:
			p.cmd.Process.Kill()
			<-p.done
			return runResult{took: time.Since(p.start), err: fmt.Errorf("committed %d input rows, not %d, within %v and was killed", w.committed(), target, timeout)}
		case <-w.changed:
		}
	}
	if delay > 0 {
		select {
		case <-p.done:
			return p.result(false)
		case <-time.After(delay):
		}
	}
	sent := p.cmd.Process.Signal(syscall.SIGKILL) == nil
	<-p.done
	return p.result(sent)
}

func (p *proc) result(sentKill bool) runResult {
	r := runResult{took: time.Since(p.start)}
	var exitErr *exec.ExitError
	switch {
	case p.err == nil:
	case errors.As(p.err, &exitErr):
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			if ws.Signal() == syscall.SIGKILL && sentKill {
				r.killed = true
				return r
			}
			r.err = fmt.Errorf("killed by signal %v", ws.Signal())
			return r
		}
		r.code = exitErr.ExitCode()
	default:
		r.err = p.err
	}
	return r
}

// tail returns the last lines of a log file, for failure messages.
// memberLogs returns the tails of the cluster members' logs, every run of
// each, in order: what a failure of the cluster job needs to be read.
func memberLogs(dir, job string) string {
	paths, _ := filepath.Glob(filepath.Join(dir, "cluster-"+job+"-m*.log"))
	slices.Sort(paths)
	var b strings.Builder
	for _, p := range paths {
		b.WriteString(tail(p) + "\n")
	}
	return b.String()
}

func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(no log %s: %v)", path, err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 40 {
		lines = append([]string{"..."}, lines[len(lines)-40:]...)
	}
	return fmt.Sprintf("--- %s\n%s", filepath.Base(path), strings.Join(lines, "\n"))
}

// multiset counts the records' values.
func multiset(recs []*kgo.Record) map[string]int {
	m := map[string]int{}
	for _, r := range recs {
		m[string(r.Value)]++
	}
	return m
}

// finalPerKey is an upsert topic's final value per key (the key's record
// with the highest offset; a key always goes to one partition), as a
// multiset of "key => value" lines; a tombstone removes the key.
func finalPerKey(recs []*kgo.Record) map[string]int {
	last := map[string][]byte{}
	for _, r := range recs { // sorted by partition, then offset
		if r.Value == nil {
			delete(last, string(r.Key))
			continue
		}
		last[string(r.Key)] = r.Value
	}
	m := make(map[string]int, len(last))
	for k, v := range last {
		m[k+" => "+string(v)] = 1
	}
	return m
}

// canonOutput turns a job's committed output into the canonical form of
// its expect function.
func canonOutput(j crashJob, recs []*kgo.Record) (map[string]int, error) {
	if j.upsert {
		last := map[string]*kgo.Record{}
		for _, r := range recs {
			last[string(r.Key)] = r
		}
		recs = slices.Collect(maps.Values(last))
	}
	m := map[string]int{}
	for _, r := range recs {
		c, err := j.canon(r)
		if err != nil {
			return nil, fmt.Errorf("record at partition %d offset %d (key %q, value %q): %w", r.Partition, r.Offset, r.Key, r.Value, err)
		}
		m[c]++
	}
	return m, nil
}

// duplicates describes the duplicates in a job's output. An append job
// produces every row once, and no two rows with the same key (its rowKey:
// a window and a key, an input row); an upsert job's values of a key count
// ever more rows (n), so a key whose n does not grow from one record to
// the next had a row counted twice or an update repeated.
func duplicates(j crashJob, recs []*kgo.Record) string {
	var b strings.Builder
	lines := 0
	add := func(format string, args ...any) {
		if lines < 20 {
			fmt.Fprintf(&b, format+"\n", args...)
		}
		lines++
	}
	if !j.upsert {
		seen := map[string]*kgo.Record{}
		for _, r := range recs {
			key, err := j.rowKey(r.Value)
			if err != nil {
				add("  %s at partition %d offset %d: %v", r.Value, r.Partition, r.Offset, err)
				continue
			}
			if first, ok := seen[key]; ok {
				add("  %s at partition %d offset %d, and before %s at partition %d offset %d", r.Value, r.Partition, r.Offset, first.Value, first.Partition, first.Offset)
				continue
			}
			seen[key] = r
		}
	} else {
		prev := map[string]*kgo.Record{}
		for _, r := range recs {
			k := string(r.Key)
			if p, ok := prev[k]; ok {
				pn, perr := jsonInt(p.Value, "n")
				n, err := jsonInt(r.Value, "n")
				if perr != nil || err != nil || n <= pn {
					add("  key %s: %s at offset %d after %s at offset %d (partition %d)", k, r.Value, r.Offset, p.Value, p.Offset, r.Partition)
				}
			}
			prev[k] = r
		}
	}
	if lines > 20 {
		fmt.Fprintf(&b, "  ... %d in all\n", lines)
	}
	return b.String()
}

// diffMultisets lists what is in want more often than in got (minus) and
// the other way round (plus), sorted.
func diffMultisets(want, got map[string]int) (minus, plus []string) {
	for k, n := range want {
		for range n - got[k] {
			minus = append(minus, k)
		}
	}
	for k, n := range got {
		for range n - want[k] {
			plus = append(plus, k)
		}
	}
	slices.Sort(minus)
	slices.Sort(plus)
	return minus, plus
}

// formatDiff formats a diff of want and got: at most 30 lines of each side
// in short, every line in full.
func formatDiff(want, got map[string]int, minus, plus []string) (short, full string) {
	var b, all strings.Builder
	count := func(m map[string]int) (n int) {
		for _, c := range m {
			n += c
		}
		return n
	}
	fmt.Fprintf(&b, "%d rows on the left, %d on the right; %d only on the left, %d only on the right\n",
		count(want), count(got), len(minus), len(plus))
	for _, l := range []struct {
		sign string
		rows []string
	}{{"-", minus}, {"+", plus}} {
		for i, r := range l.rows {
			if i == 30 {
				fmt.Fprintf(&b, "%s ... %d more\n", l.sign, len(l.rows)-30)
			}
			if i < 30 {
				fmt.Fprintf(&b, "%s %s\n", l.sign, r)
			}
			fmt.Fprintf(&all, "%s %s\n", l.sign, r)
		}
	}
	return b.String(), all.String()
}

// byPartition says where in the input the rows of a diff side came from:
// per input partition, how many and their offsets' range.
func byPartition(in []event, rows []string, rowID func(string) (int64, bool)) string {
	offsets := make([]int64, len(in)) // by id: the row's offset in its partition
	next := make([]int64, inputParts)
	for i, e := range in {
		offsets[i] = next[e.part]
		next[e.part]++
	}
	type span struct{ n, lo, hi int64 }
	spans := make([]*span, inputParts)
	unknown := 0
	for _, r := range rows {
		id, ok := rowID(r)
		if !ok || id < 0 || id >= int64(len(in)) {
			unknown++
			continue
		}
		e, off := in[id], offsets[id]
		sp := spans[e.part]
		if sp == nil {
			sp = &span{lo: off, hi: off}
			spans[e.part] = sp
		}
		sp.n++
		sp.lo, sp.hi = min(sp.lo, off), max(sp.hi, off)
	}
	var parts []string
	for p, sp := range spans {
		if sp != nil {
			parts = append(parts, fmt.Sprintf("partition %d: %d rows at offsets %d..%d (of %d)", p, sp.n, sp.lo, sp.hi, next[p]))
		}
	}
	if unknown > 0 {
		parts = append(parts, fmt.Sprintf("%d rows of no known input row", unknown))
	}
	return strings.Join(parts, "; ")
}

// saveDiff writes a full diff to dir and says where it is.
func saveDiff(t *testing.T, dir, name, full string) string {
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(full), 0o644); err != nil {
		return fmt.Sprintf("(cannot save the full diff: %v)", err)
	}
	return fmt.Sprintf("every differing row: %s (set SLUICE_CRASH_DIR to keep it)", path)
}

// The canonical forms of the jobs' rows: timestamps in one layout,
// numbers in decimal, fields in the templates' column order.

const canonTime = "2006-01-02 15:04:05.000"

func expectWindow(in []event) map[string]int {
	type agg struct{ n, total, lo, hi int64 }
	type wk struct {
		start time.Time
		k     string
	}
	aggs := map[wk]*agg{}
	for _, e := range in {
		key := wk{e.ts.Truncate(10 * time.Second), e.k}
		a := aggs[key]
		if a == nil {
			a = &agg{lo: e.v, hi: e.v}
			aggs[key] = a
		}
		a.n++
		a.total += e.v
		a.lo, a.hi = min(a.lo, e.v), max(a.hi, e.v)
	}
	m := map[string]int{}
	for key, a := range aggs {
		m[fmt.Sprintf("%s|%s|%s|%d|%d|%d|%d", key.start.Format(canonTime), key.start.Add(10*time.Second).Format(canonTime),
			key.k, a.n, a.total, a.lo, a.hi)]++
	}
	return m
}

func canonWindow(r *kgo.Record) (string, error) {
	var row struct {
		WindowStart, WindowEnd string
		K                      string
		N, Total, Lo, Hi       *int64
	}
	if err := strictJSON(r.Value, &row, map[string]string{"window_start": "WindowStart", "window_end": "WindowEnd"}); err != nil {
		return "", err
	}
	ws, err := parseTime(row.WindowStart)
	if err != nil {
		return "", err
	}
	we, err := parseTime(row.WindowEnd)
	if err != nil {
		return "", err
	}
	if row.N == nil || row.Total == nil || row.Lo == nil || row.Hi == nil {
		return "", errors.New("a column is missing or null")
	}
	return fmt.Sprintf("%s|%s|%s|%d|%d|%d|%d", ws.Format(canonTime), we.Format(canonTime), row.K, *row.N, *row.Total, *row.Lo, *row.Hi), nil
}

func expectGroupBy(in []event) map[string]int {
	type agg struct{ n, total, hi int64 }
	aggs := map[string]*agg{}
	for _, e := range in {
		a := aggs[e.k]
		if a == nil {
			a = &agg{hi: e.v}
			aggs[e.k] = a
		}
		a.n++
		a.total += e.v
		a.hi = max(a.hi, e.v)
	}
	m := map[string]int{}
	for k, a := range aggs {
		m[fmt.Sprintf("%s|%d|%d|%d", k, a.n, a.total, a.hi)]++
	}
	return m
}

func canonGroupBy(r *kgo.Record) (string, error) {
	var key struct{ K string }
	if err := strictJSON(r.Key, &key, nil); err != nil {
		return "", fmt.Errorf("key: %w", err)
	}
	var row struct {
		K            string
		N, Total, Hi *int64
	}
	if err := strictJSON(r.Value, &row, nil); err != nil {
		return "", err
	}
	if row.K != key.K {
		return "", fmt.Errorf("the value's k %q is not the key's %q", row.K, key.K)
	}
	if row.N == nil || row.Total == nil || row.Hi == nil {
		return "", errors.New("a column is missing or null")
	}
	return fmt.Sprintf("%s|%d|%d|%d", row.K, *row.N, *row.Total, *row.Hi), nil
}

func expectFilter(in []event) map[string]int {
	m := map[string]int{}
	for _, e := range in {
		if e.v%3 == 0 {
			m[fmt.Sprintf("%d|%s|%s|%d", e.id, e.ts.Format(canonTime), strings.ToUpper(e.k), e.v*10+1)]++
		}
	}
	return m
}

func canonFilter(r *kgo.Record) (string, error) {
	var row struct {
		ID *int64
		TS string
		K  string
		W  *int64
	}
	if err := strictJSON(r.Value, &row, nil); err != nil {
		return "", err
	}
	ts, err := parseTime(row.TS)
	if err != nil {
		return "", err
	}
	if row.ID == nil || row.W == nil {
		return "", errors.New("a column is missing or null")
	}
	return fmt.Sprintf("%d|%s|%s|%d", *row.ID, ts.Format(canonTime), row.K, *row.W), nil
}

// windowKey is a window row's window and key.
func windowKey(value []byte) (string, error) {
	var row struct {
		WindowStart string `json:"window_start"`
		WindowEnd   string `json:"window_end"`
		K           string `json:"k"`
	}
	if err := json.Unmarshal(value, &row); err != nil {
		return "", err
	}
	return row.WindowStart + "|" + row.WindowEnd + "|" + row.K, nil
}

// filterKey is a filtered row's input row.
func filterKey(value []byte) (string, error) {
	id, err := jsonInt(value, "id")
	return strconv.FormatInt(id, 10), err
}

func filterRowID(value string) (int64, bool) {
	id, err := jsonInt([]byte(value), "id")
	return id, err == nil
}

// strictJSON decodes a JSON object into v, whose fields match the
// object's keys case-insensitively or through rename (JSON key → field);
// unknown keys are an error.
func strictJSON(data []byte, v any, rename map[string]string) error {
	if len(rename) > 0 {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(data, &obj); err != nil {
			return err
		}
		for from, to := range rename {
			if raw, ok := obj[from]; ok {
				delete(obj, from)
				obj[to] = raw
			}
		}
		var err error
		if data, err = json.Marshal(obj); err != nil {
			return err
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// jsonInt reads an integer field of a JSON object.
func jsonInt(data []byte, field string) (int64, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return 0, err
	}
	return strconv.ParseInt(string(obj[field]), 10, 64)
}

// parseTime parses a JSON TIMESTAMP, with or without fractional seconds.
func parseTime(s string) (time.Time, error) {
	for _, layout := range []string{"2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999"} {
		if ts, err := time.Parse(layout, s); err == nil {
			return ts, nil
		}
	}
	return time.Time{}, fmt.Errorf("cannot parse timestamp %q", s)
}
