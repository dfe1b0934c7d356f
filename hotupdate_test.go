package sluice_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/internal/kafkatest"
	"github.com/sluicesql/sluice/state"
)

// updateRig runs the versions of a job one after another on one engine,
// each in a session of its own, as a service updating a job does: it
// compares each new version with the saved state first (Plan,
// SavedManifest, state.Compare).
type updateRig struct {
	t      *testing.T
	e      *sluice.Engine
	out    *syncBuffer
	log    *syncBuffer
	topic  string
	bs     string
	header string
}

func newUpdateRig(t *testing.T) *updateRig {
	bs := kafkatest.Start(t, 1, "ticks")
	out, log := &syncBuffer{}, &syncBuffer{}
	e, err := sluice.Open(sluice.Options{Stdout: out, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	header := fmt.Sprintf(`SET 'state.dir' = '%s';
SET 'execution.checkpointing.interval' = '50ms';
SET 'parallelism.default' = '2';
SET 'pipeline.name' = 'counts';
CREATE TABLE ticks (k STRING, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH (
  'connector' = 'kafka', 'topic' = 'ticks', 'properties.bootstrap.servers' = '%s',
  'scan.startup.mode' = 'earliest-offset', 'format' = 'json');
`, t.TempDir(), bs)
	return &updateRig{t: t, e: e, out: out, log: log, bs: bs, header: header}
}

// produce writes ticks from to to (excluded): tick i at second i after
// clusterBase, of key a (i even) or b, with value i.
func (r *updateRig) produce(from, to int) {
	var recs []*kgo.Record
	for i := from; i < to; i++ {
		ts := clusterBase.Add(time.Duration(i) * time.Second)
		recs = append(recs, &kgo.Record{Value: fmt.Appendf(nil, `{"k":"%s","v":%d,"ts":"%s"}`,
			string(rune('a'+i%2)), i, ts.Format("2006-01-02 15:04:05"))})
	}
	kafkatest.Produce(r.t, r.bs, "ticks", recs...)
}

// report plans version src and compares it with the saved state.
func (r *updateRig) report(src string) state.Report {
	r.t.Helper()
	src = r.header + src
	p, err := r.e.Plan("job.sql", []byte(src))
	if err != nil {
		r.t.Fatal(sluice.FormatError(err, []byte(src)))
	}
	if p.Name != "counts" || !strings.Contains(p.Explain, "WindowAggregate") {
		r.t.Fatalf("plan named %q, explained as\n%s", p.Name, p.Explain)
	}
	saved, ok, err := r.e.SavedManifest(context.Background(), p.Name, p.Config)
	if err != nil || !ok {
		r.t.Fatalf("no saved manifest (%v)", err)
	}
	return state.Compare(saved, p.Manifest)
}

// run starts version src in a new session, waits until its output holds
// each of waits, lets a few checkpoints pass and stops it (with a final
// checkpoint); it returns what the version printed.
func (r *updateRig) run(src string, waits ...string) string {
	r.t.Helper()
	j, err := r.start(src)
	if err != nil {
		r.t.Fatal(err)
	}
	from := len(r.out.String())
	deadline := time.Now().Add(30 * time.Second)
	holds := func() bool {
		for _, w := range waits {
			if !strings.Contains(r.out.String()[from:], w) {
				return false
			}
		}
		return true
	}
	for !holds() {
		select {
		case <-j.Done():
			r.t.Fatalf("the job ended: %v\n%s", j.Wait(), r.out.String()[from:])
		default:
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("not all of %q in the output:\n%s", waits, r.out.String()[from:])
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // checkpoints go on
	j.Stop()
	if err := j.Wait(); err != nil {
		r.t.Fatal(err)
	}
	return r.out.String()[from:]
}

// start starts version src in a new session.
func (r *updateRig) start(src string) (*sluice.Job, error) {
	r.t.Helper()
	src = r.header + src
	s := r.e.NewSession()
	res, err := s.Exec(context.Background(), "job.sql", []byte(src))
	if err != nil {
		r.t.Fatal(sluice.FormatError(err, []byte(src)))
	}
	j := res[len(res)-1].Job
	if j.Name != "counts" {
		r.t.Fatalf("the job is named %q, want counts (the name of the version before, which ended)", j.Name)
	}
	return j, nil
}

// windowStart is how the rows of key k's window starting at minute m
// begin.
func windowStart(k string, m int) string {
	return fmt.Sprintf("+I[%s, %s", k, clusterBase.Add(time.Duration(m)*time.Minute).Format("2006-01-02 15:04:05.000"))
}

// windowCount is what a tumbling window of size minutes starting at
// minute m prints for key k, over the ticks from to to (excluded):
// "+I[k, <start>, n, sum]", with window_end after the start if withEnd.
func windowCount(k string, m, size, from, to int, withEnd bool) string {
	n, sum := 0, 0
	for i := max(from, m*60); i < min(to, (m+size)*60); i++ {
		if string(rune('a'+i%2)) == k {
			n, sum = n+1, sum+i
		}
	}
	at := func(min int) string {
		return clusterBase.Add(time.Duration(min) * time.Minute).Format("2006-01-02 15:04:05.000")
	}
	if withEnd {
		return fmt.Sprintf("+I[%s, %s, %s, %d, %d]", k, at(m), at(m+size), n, sum)
	}
	return fmt.Sprintf("+I[%s, %s, %d, %d]", k, at(m), n, sum)
}

// The versions of the job: v1 counts per key and minute; v2 changes only
// the filter after the window and adds a column to the sink; v3 makes
// the window two minutes long.
const (
	hotV1 = `CREATE TABLE out (k STRING, ws TIMESTAMP(3), n BIGINT, s BIGINT) WITH ('connector' = 'print');
INSERT INTO out SELECT k, window_start, n, s FROM (
  SELECT k, window_start, window_end, COUNT(*) AS n, SUM(v) AS s
  FROM TABLE(TUMBLE(TABLE ticks, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
  GROUP BY k, window_start, window_end) WHERE n > 0;`
	hotV2 = `CREATE TABLE out (k STRING, ws TIMESTAMP(3), we TIMESTAMP(3), n BIGINT, s BIGINT) WITH ('connector' = 'print');
INSERT INTO out SELECT k, window_start, window_end, n, s FROM (
  SELECT k, window_start, window_end, COUNT(*) AS n, SUM(v) AS s
  FROM TABLE(TUMBLE(TABLE ticks, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
  GROUP BY k, window_start, window_end) WHERE k <> 'z';`
	hotV3 = `CREATE TABLE out (k STRING, ws TIMESTAMP(3), we TIMESTAMP(3), n BIGINT, s BIGINT) WITH ('connector' = 'print');
INSERT INTO out SELECT k, window_start, window_end, n, s FROM (
  SELECT k, window_start, window_end, COUNT(*) AS n, SUM(v) AS s
  FROM TABLE(TUMBLE(TABLE ticks, DESCRIPTOR(ts), INTERVAL '2' MINUTE))
  GROUP BY k, window_start, window_end) WHERE k <> 'z';`
)

// A windowed aggregation updated with a filter after the window changed
// and a sink column added keeps its open windows and counts: the update
// is reported compatible, and the window open at the update is emitted
// whole, counted across both versions. Making the window longer is
// reported as dropping the window's state and refused; accepted with
// 'state.allow-loss', the window starts from zero while the source goes
// on from its position.
func TestHotUpdateKeepsWindows(t *testing.T) {
	r := newUpdateRig(t)
	r.produce(0, 150) // minutes 0 and 1 complete, minute 2 open with 30 ticks
	first := r.run(hotV1, windowStart("a", 1), windowStart("b", 1))
	if strings.Contains(first, "00:02:00") {
		t.Fatalf("v1 emitted the open window:\n%s", first)
	}
	for _, k := range []string{"a", "b"} {
		if want := windowCount(k, 1, 1, 0, 150, false); !strings.Contains(first, want) {
			t.Fatalf("v1 printed no %s:\n%s", want, first)
		}
	}

	rep := r.report(hotV2)
	if rep.Verdict != state.Compatible {
		t.Fatalf("v1 → v2 reported %s: %+v", rep.Verdict, rep.Changes)
	}
	var labels []string
	for _, c := range rep.Changes {
		labels = append(labels, c.Label)
		if c.Change != state.Kept {
			t.Errorf("v1 → v2: %s is %s (%s), want kept", c.Label, c.Change, c.Reason)
		}
	}
	if !slices.Contains(labels, "WindowAggregate") || !slices.Contains(labels, "source ticks") {
		t.Fatalf("the report lists %v, want the source and the window aggregate", labels)
	}

	r.produce(150, 200) // minute 2 gets its last 30 ticks, minute 3 opens
	second := r.run(hotV2, windowStart("a", 2), windowStart("b", 2))
	for _, k := range []string{"a", "b"} {
		if want := windowCount(k, 2, 1, 0, 200, true); !strings.Contains(second, want) {
			t.Errorf("the window open at the update was not continued exactly: want %s in\n%s", want, second)
		}
	}
	if strings.Contains(second, "00:01:00.000, 2026") {
		t.Errorf("v2 emitted a window v1 had emitted:\n%s", second)
	}

	rep = r.report(hotV3)
	if rep.Verdict != state.Incompatible {
		t.Fatalf("v2 → v3 reported %s: %+v", rep.Verdict, rep.Changes)
	}
	for _, c := range rep.Changes {
		switch c.Label {
		case "source ticks":
			if c.Change != state.Kept {
				t.Errorf("the source is %s (%s), want kept", c.Change, c.Reason)
			}
		case "WindowAggregate":
			if c.Change != state.Dropped || c.OldID == "" || c.NewID == "" || c.OldID == c.NewID ||
				!strings.Contains(c.Reason, "window size changed: was TUMBLE(size=[1 min]), now TUMBLE(size=[2 min])") {
				t.Errorf("the window aggregate's change: %+v", c)
			}
		default:
			t.Errorf("unexpected change %+v", c)
		}
	}

	// Refused by default, with what differs and the way out.
	j, err := r.start(hotV3)
	if err != nil {
		t.Fatal(err)
	}
	err = j.Wait()
	if err == nil || !strings.Contains(err.Error(), "2 min") || !strings.Contains(err.Error(), "state.allow-loss") {
		t.Fatalf("v3 over v2's state: %v", err)
	}

	// Accepted with 'state.allow-loss'.
	r.produce(200, 300) // minutes 3 and 4
	third := r.run("SET 'state.allow-loss' = 'true';\n"+hotV3, windowStart("a", 2), windowStart("b", 2))
	for _, k := range []string{"a", "b"} {
		// The two-minute window of minutes 2 and 3 holds only the ticks
		// read after the update: its state starts from zero, and the
		// source resumes where v2 stopped (not from the start of the
		// topic, which would count the window's 120 ticks).
		if want := windowCount(k, 2, 2, 200, 300, true); !strings.Contains(third, want) {
			t.Errorf("v3 with 'state.allow-loss': want %s in\n%s", want, third)
		}
	}
	if log := r.log.String(); !strings.Contains(log, "dropped the state of WindowAggregate") || !strings.Contains(log, "window size changed") {
		t.Errorf("the log does not say which state was dropped:\n%s", log)
	}
	// v3's state is its own now: its report against itself is compatible.
	if rep := r.report(hotV3); rep.Verdict != state.Compatible {
		t.Errorf("v3 over its own state: %s %+v", rep.Verdict, rep.Changes)
	}
}

// What Plan and state.Compare report for edits of a windowed
// aggregation: state identity comes from what an operator computes (its
// input columns, keys, window and aggregates), so that edits around it
// keep its state.
func TestHotUpdateReport(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "ticks.jsonl", "")
	writeFile(t, dir, "other.jsonl", "")
	e, err := sluice.Open(sluice.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	job := func(file, sink, query string) string {
		return `SET 'pipeline.name' = 'counts';
CREATE TABLE ticks (k STRING, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH (
  'connector' = 'filesystem', 'path' = '` + dir + `/` + file + `', 'format' = 'json');
CREATE VIEW positive AS SELECT * FROM ticks WHERE v > 0;
CREATE TABLE out (` + sink + `) WITH ('connector' = 'print');
INSERT INTO out ` + query + `;`
	}
	const (
		sink  = "k STRING, ws TIMESTAMP(3), n BIGINT, s BIGINT"
		inner = `SELECT k, window_start, window_end, COUNT(*) AS n, SUM(v) AS s
  FROM TABLE(TUMBLE(TABLE ticks, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY k, window_start, window_end`
	)
	base := job("ticks.jsonl", sink, "SELECT k, window_start, n, s FROM ("+inner+") WHERE n > 0")
	plan := func(src string) state.Manifest {
		t.Helper()
		p, err := e.Plan("job.sql", []byte(src))
		if err != nil {
			t.Fatal(sluice.FormatError(err, []byte(src)))
		}
		return p.Manifest
	}
	old := plan(base)
	for _, c := range []struct {
		name    string
		src     string
		verdict state.Compatibility
		// reason is in the reason of the window aggregate's change.
		reason string
	}{
		{"unchanged", base, state.Compatible, "carries over"},
		{"filter after the window", job("ticks.jsonl", sink,
			"SELECT k, window_start, n, s FROM ("+inner+") WHERE k <> 'z' AND s > 10"), state.Compatible, "carries over"},
		{"sink column added", job("ticks.jsonl", "k STRING, ws TIMESTAMP(3), we TIMESTAMP(3), n BIGINT, s BIGINT, avg DOUBLE",
			"SELECT k, window_start, window_end, n, s, CAST(s AS DOUBLE) / n FROM ("+inner+")"), state.Compatible, "carries over"},
		{"filter before the window", job("ticks.jsonl", sink, `SELECT k, window_start, COUNT(*), SUM(v)
  FROM TABLE(TUMBLE(TABLE positive, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
  GROUP BY k, window_start, window_end`), state.Compatible, "carries over"},
		{"window size", job("ticks.jsonl", sink, `SELECT k, window_start, COUNT(*), SUM(v)
  FROM TABLE(TUMBLE(TABLE ticks, DESCRIPTOR(ts), INTERVAL '2' MINUTE)) GROUP BY k, window_start, window_end`),
			state.Incompatible, "window size changed: was TUMBLE(size=[1 min]), now TUMBLE(size=[2 min])"},
		{"window kind", job("ticks.jsonl", sink, `SELECT k, window_start, COUNT(*), SUM(v)
  FROM TABLE(HOP(TABLE ticks, DESCRIPTOR(ts), INTERVAL '30' SECOND, INTERVAL '1' MINUTE)) GROUP BY k, window_start, window_end`),
			state.Incompatible, "window changed: was TUMBLE(size=[1 min]), now HOP("},
		{"aggregate added", job("ticks.jsonl", sink+", mx BIGINT", `SELECT k, window_start, COUNT(*), SUM(v), MAX(v)
  FROM TABLE(TUMBLE(TABLE ticks, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY k, window_start, window_end`),
			state.Incompatible, "aggregates changed: was COUNT(*), SUM($f1), now COUNT(*), SUM($f1), MAX($f1)"},
		{"keys", job("ticks.jsonl", "k STRING, v BIGINT, ws TIMESTAMP(3), n BIGINT", `SELECT k, v, window_start, COUNT(*)
  FROM TABLE(TUMBLE(TABLE ticks, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY k, v, window_start, window_end`),
			state.Incompatible, "grouping keys changed: was k, now k, v"},
	} {
		rep := state.Compare(old, plan(c.src))
		if rep.Verdict != c.verdict {
			t.Errorf("%s: verdict %s, want %s: %+v", c.name, rep.Verdict, c.verdict, rep.Changes)
		}
		found := false
		for _, ch := range rep.Changes {
			if ch.Label == "source ticks" && ch.Change != state.Kept {
				t.Errorf("%s: the source is %s: %s", c.name, ch.Change, ch.Reason)
			}
			if ch.Label == "WindowAggregate" {
				found = true
				if !strings.Contains(ch.Reason, c.reason) {
					t.Errorf("%s: the window aggregate's change is %s: %q, want %q in it", c.name, ch.Change, ch.Reason, c.reason)
				}
			}
		}
		if !found {
			t.Errorf("%s: the report has no window aggregate: %+v", c.name, rep.Changes)
		}
	}

	// A second INSERT over the same source adds an operator and drops
	// nothing: partially compatible. Reading another file drops the
	// source's positions.
	set := `SET 'pipeline.name' = 'counts';
CREATE TABLE ticks (k STRING, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH (
  'connector' = 'filesystem', 'path' = '` + dir + `/ticks.jsonl', 'format' = 'json');
CREATE TABLE out (` + sink + `) WITH ('connector' = 'print');
CREATE TABLE totals (k STRING, n BIGINT) WITH ('connector' = 'print');
EXECUTE STATEMENT SET BEGIN
INSERT INTO out SELECT k, window_start, n, s FROM (` + inner + `);
INSERT INTO totals SELECT k, COUNT(*) FROM ticks GROUP BY k;
END;`
	rep := state.Compare(old, plan(set))
	var changes []string
	for _, c := range rep.Changes {
		changes = append(changes, c.Label+" "+string(c.Change))
	}
	if want := []string{"source ticks kept", "WindowAggregate kept", "GroupAggregate new"}; rep.Verdict != state.PartiallyCompatible || !slices.Equal(changes, want) {
		t.Errorf("a second INSERT: %s %v, want %s %v", rep.Verdict, changes, state.PartiallyCompatible, want)
	}
	rep = state.Compare(old, plan(job("other.jsonl", sink, "SELECT k, window_start, n, s FROM ("+inner+")")))
	if rep.Verdict != state.Incompatible || rep.Changes[0].Change != state.Dropped ||
		!strings.Contains(rep.Changes[0].Reason, "reads something else: was filesystem "+dir+"/ticks.jsonl, now filesystem "+dir+"/other.jsonl") {
		t.Errorf("another file: %s %+v", rep.Verdict, rep.Changes)
	}
	// And back: the first version's state would be dropped whole.
	rep = state.Compare(plan(set), old)
	if rep.Verdict != state.Incompatible || rep.Changes[len(rep.Changes)-1].Label != "GroupAggregate" ||
		!strings.Contains(rep.Changes[len(rep.Changes)-1].Reason, "no longer in the job") {
		t.Errorf("an INSERT removed: %s %+v", rep.Verdict, rep.Changes)
	}
}

// Plan refuses a script that starts no job, or two.
func TestPlanOneJob(t *testing.T) {
	e, err := sluice.Open(sluice.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ddl := `CREATE TABLE t (k STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '3');
CREATE TABLE out (k STRING) WITH ('connector' = 'print');
`
	if _, err := e.Plan("job.sql", []byte(ddl)); err == nil || !strings.Contains(err.Error(), "starts no job") {
		t.Errorf("a script without a job: %v", err)
	}
	src := ddl + "INSERT INTO out SELECT k FROM t;\nINSERT INTO out SELECT k FROM t;"
	_, err = e.Plan("job.sql", []byte(src))
	if err == nil || !strings.Contains(sluice.FormatError(err, []byte(src)), "job.sql:4:1: the script starts a second job (the first is at line 3, column 1)") {
		t.Errorf("a script with two jobs: %v", err)
	}
	// The script's tables and options are the plan's session's, not the
	// engine's.
	p, err := e.Plan("job.sql", []byte(ddl+"SET 'pipeline.name' = 'x';\nINSERT INTO out SELECT k FROM t;"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "x" || p.Config["pipeline.name"] != "x" || len(p.Manifest.Entries) != 1 {
		t.Errorf("plan: %+v", p)
	}
	if _, ok := e.Config()["pipeline.name"]; ok {
		t.Error("the script's SET reached the engine")
	}
	if _, err := e.Exec(context.Background(), "q.sql", []byte("INSERT INTO out SELECT k FROM t;")); err == nil {
		t.Error("the script's tables reached the engine")
	}
}

// SavedManifest reads a job's manifest from its Kafka changelog while the
// job runs, without taking the job's transactional ID over: the job goes
// on committing.
func TestSavedManifestKafkaWhileRunning(t *testing.T) {
	r := newUpdateRig(t)
	src := strings.Replace(r.header, "SET 'state.dir'", "SET 'state.backend' = 'kafka';\nSET 'state.kafka.bootstrap.servers' = '"+r.bs+"';\n-- SET 'state.dir'", 1) +
		`CREATE TABLE out (k STRING, n BIGINT) WITH ('connector' = 'print');
INSERT INTO out SELECT k, COUNT(*) FROM ticks GROUP BY k;`
	p, err := r.e.Plan("job.sql", []byte(src))
	if err != nil {
		t.Fatal(sluice.FormatError(err, []byte(src)))
	}
	if _, ok, err := r.e.SavedManifest(context.Background(), p.Name, p.Config); ok || err != nil {
		t.Fatalf("a saved manifest before the job ran: %v %v", ok, err)
	}
	res, err := r.e.NewSession().Exec(context.Background(), "job.sql", []byte(src))
	if err != nil {
		t.Fatal(sluice.FormatError(err, []byte(src)))
	}
	j := res[len(res)-1].Job
	defer j.Cancel()
	waitCount := func(k, n string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for lastCounts(r.out.String())[k] != n {
			select {
			case <-j.Done():
				t.Fatalf("the job ended: %v", j.Wait())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("no count %s of %s:\n%s", n, k, r.out.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	r.produce(0, 10)
	waitCount("a", "5")
	time.Sleep(200 * time.Millisecond) // a few checkpoints commit
	saved, ok, err := r.e.SavedManifest(context.Background(), p.Name, p.Config)
	if err != nil || !ok {
		t.Fatalf("no saved manifest while the job runs: %v %v", ok, err)
	}
	if rep := state.Compare(saved, p.Manifest); rep.Verdict != state.Compatible || len(rep.Changes) != 2 {
		t.Fatalf("the running job's manifest against its plan: %s %+v", rep.Verdict, rep.Changes)
	}
	r.produce(10, 20)
	waitCount("a", "10")
	time.Sleep(200 * time.Millisecond)
	j.Stop()
	if err := j.Wait(); err != nil {
		t.Fatalf("the job failed after its manifest was read: %v", err)
	}
}

// Jobs running at once never share a name; a job of a new session takes
// the name of one that ended (a new version resumes its state), while a
// session names its own jobs of one name apart, in the order they start.
func TestJobNames(t *testing.T) {
	e, err := sluice.Open(sluice.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	const src = `SET 'pipeline.name' = 'x';
CREATE TABLE IF NOT EXISTS t (k STRING) WITH ('connector' = 'datagen', 'rows-per-second' = '1');
CREATE TABLE IF NOT EXISTS out (k STRING) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT k FROM t;`
	start := func(s *sluice.Engine) *sluice.Job {
		t.Helper()
		res, err := s.Exec(context.Background(), "job.sql", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		return res[len(res)-1].Job
	}
	stop := func(j *sluice.Job) {
		t.Helper()
		j.Stop()
		if err := j.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	s1, s2, s3 := e.NewSession(), e.NewSession(), e.NewSession()
	j1 := start(s1)
	j2 := start(s2)
	stop(j1)
	j3 := start(s3)
	j4 := start(s3)
	stop(j3)
	j5 := start(s1)
	var names []string
	for _, j := range []*sluice.Job{j1, j2, j3, j4, j5} {
		names = append(names, j.Name)
	}
	if want := []string{"x", "x-2", "x", "x-3", "x-4"}; !slices.Equal(names, want) {
		// j4: s3's second job of x, with x-2 held by j2; j5: s1's
		// second, with x-2 and x-3 held.
		t.Errorf("names %v, want %v", names, want)
	}
}

// Planning a job builds its connectors and closes them unused: planning
// the script of a running job whose Kafka sink writes in transactions of
// its own does not fence the job's producer.
func TestPlanLeavesRunningJobAlone(t *testing.T) {
	bs := kafkatest.Start(t, 2, "in", "out")
	src := strings.ReplaceAll(`CREATE TABLE src (id BIGINT, s STRING) WITH ('connector' = 'kafka', 'topic' = 'in',
  'properties.bootstrap.servers' = '$BS', 'scan.startup.mode' = 'earliest-offset', 'format' = 'json');
CREATE TABLE out (id BIGINT, s STRING) WITH ('connector' = 'kafka', 'topic' = 'out',
  'properties.bootstrap.servers' = '$BS', 'format' = 'json', 'sink.delivery-guarantee' = 'exactly-once',
  'sink.transactional-id-prefix' = 'plan-test', 'sink.transaction.interval' = '50ms');
INSERT INTO out SELECT id, s FROM src;`, "$BS", bs)
	e, err := sluice.Open(sluice.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	res, err := e.NewSession().Exec(context.Background(), "job.sql", []byte(src))
	if err != nil {
		t.Fatal(sluice.FormatError(err, []byte(src)))
	}
	j := res[len(res)-1].Job
	defer j.Cancel()
	waitOut := func(n int) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for len(kafkatest.ReadAll(t, bs, "out")) < n {
			select {
			case <-j.Done():
				t.Fatalf("the job ended: %v", j.Wait())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("fewer than %d records in out", n)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	produceIDs(t, bs, "in", 0, 10)
	waitOut(10)
	for range 2 {
		p, err := e.Plan("job.sql", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if p.Name != "insert-into-out" || len(p.Manifest.Entries) != 1 {
			t.Fatalf("plan %+v", p)
		}
	}
	produceIDs(t, bs, "in", 10, 20)
	waitOut(20)
	j.Stop()
	if err := j.Wait(); err != nil {
		t.Fatalf("the job failed once its script was planned: %v", err)
	}
	if n := len(kafkatest.ReadAll(t, bs, "out")); n != 20 {
		t.Errorf("out holds %d records, want 20", n)
	}
}
