package crash_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCrashFiles is the crash test of the file path: jobs over a
// directory source and into filesystem sinks, with their state in a
// 'state.dir', are interrupted at random moments, by SIGKILL and by
// SIGTERM, and restarted until a run ends by itself. Between such
// phases, files are added to the input directory (one whose name sorts
// before the others'), appended to, and archived (moved away) once read.
// In the end the committed output must be exact, whatever the
// interruptions:
//
//   - "filter" writes the rows that pass a filter to a directory sink
//     whose part files roll often: every input row that passes, once, and
//     at every interruption no visible part file holds a torn line;
//   - "count" writes an updating GROUP BY, as debezium-json, to one output
//     file: replayed, the changelog must give every key its count and
//     sum from the input, and every update must retract exactly the row
//     the previous one wrote (a row written twice, or lost, breaks the
//     chain);
//   - "set" is "filter" and "count" in one statement set, over one
//     source read once for both (source reuse), checked as they are;
//   - "partitioned" writes the rows that pass the filter to a table
//     PARTITIONED BY a bucket column, with a success file as the
//     partition commit policy: every row once, in the k=v directory of
//     its bucket, no torn line visible at any interruption, and every
//     partition committed (its success file) at the end.
func TestCrashFiles(t *testing.T) {
	rng, dir := crashSetup(t, 0xf11e5, "files")
	bin := buildSluice(t, dir, os.Getenv("SLUICE_CRASH_RACE") == "1")
	for _, job := range []string{"filter", "count", "set", "partitioned"} {
		t.Run(job, func(t *testing.T) {
			runFileJob(t, job, bin, filepath.Join(dir, job), rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64())))
		})
	}
}

const (
	// filePhases is how many times input is added and the job run to its
	// end, with interruptions.
	filePhases = 4
	// fileRowsPerPhase is about how many input rows each phase adds.
	fileRowsPerPhase = 300_000
	// fileInterrupts is how many interruptions each phase plans.
	fileInterrupts = 5
	// fileKeys distinct keys.
	fileKeys = 300
)

// fileJobSQL is each job's SQL; $DIR is its work directory.
var fileJobSQL = map[string]string{
	"filter": `
CREATE TABLE out (id BIGINT, k STRING, v BIGINT) WITH ('connector' = 'filesystem', 'path' = '$DIR/out', 'format' = 'json',
  'sink.rolling-policy.file-size' = '64kb');
INSERT INTO out SELECT id, UPPER(k), v FROM events WHERE MOD(v, 4) <> 0;`,
	"count": `
CREATE TABLE counts (k STRING, n BIGINT, s BIGINT, PRIMARY KEY (k) NOT ENFORCED)
  WITH ('connector' = 'filesystem', 'path' = '$DIR/counts.jsonl', 'format' = 'debezium-json');
INSERT INTO counts SELECT k, COUNT(*), SUM(v) FROM events GROUP BY k;`,
	// "set" is "filter" and "count" in one job, a statement set: both
	// read one shared source (table.optimizer.reuse-source-enabled).
	"set": `
CREATE TABLE out (id BIGINT, k STRING, v BIGINT) WITH ('connector' = 'filesystem', 'path' = '$DIR/out', 'format' = 'json',
  'sink.rolling-policy.file-size' = '64kb');
CREATE TABLE counts (k STRING, n BIGINT, s BIGINT, PRIMARY KEY (k) NOT ENFORCED)
  WITH ('connector' = 'filesystem', 'path' = '$DIR/counts.jsonl', 'format' = 'debezium-json');
EXECUTE STATEMENT SET BEGIN
INSERT INTO out SELECT id, UPPER(k), v FROM events WHERE MOD(v, 4) <> 0;
INSERT INTO counts SELECT k, COUNT(*), SUM(v) FROM events GROUP BY k;
END;`,
	"partitioned": `
CREATE TABLE pout (id BIGINT, k STRING, v BIGINT, b STRING) PARTITIONED BY (b)
  WITH ('connector' = 'filesystem', 'path' = '$DIR/pout', 'format' = 'json',
  'sink.rolling-policy.file-size' = '64kb', 'sink.partition-commit.policy.kind' = 'success-file');
INSERT INTO pout SELECT id, UPPER(k), v, CONCAT('b', CAST(MOD(v, 5) AS STRING)) FROM events WHERE MOD(v, 4) <> 0;`,
}

// fileRow is one input row.
type fileRow struct {
	id   int64
	k    string
	v    int64
	file string // the file it was written to
}

func runFileJob(t *testing.T, job, bin, dir string, rng *rand.Rand) {
	in, archive := filepath.Join(dir, "in"), filepath.Join(dir, "archive")
	os.RemoveAll(dir) // a kept work directory's earlier run
	for _, d := range []string{in, archive, filepath.Join(dir, "out")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sql := strings.ReplaceAll(`SET 'state.dir' = '$DIR/state';
SET 'execution.checkpointing.interval' = '50ms';
SET 'parallelism.default' = '2';
CREATE TABLE events (id BIGINT, k STRING, v BIGINT) WITH ('connector' = 'filesystem', 'path' = '$DIR/in', 'format' = 'json',
  'source.max-open-files' = '2');
`+fileJobSQL[job], "$DIR", dir)
	sqlPath := filepath.Join(dir, "job.sql")
	if err := os.WriteFile(sqlPath, []byte(sql), 0o644); err != nil {
		t.Fatal(err)
	}
	var rows []fileRow
	nextID := int64(0)
	addFile := func(name string, n int, appendTo bool) {
		var b strings.Builder
		for range n {
			r := fileRow{id: nextID, k: "k" + strconv.Itoa(rng.IntN(fileKeys)), v: rng.Int64N(100), file: name}
			nextID++
			rows = append(rows, r)
			fmt.Fprintf(&b, `{"id":%d,"k":"%s","v":%d}`+"\n", r.id, r.k, r.v)
		}
		flag := os.O_CREATE | os.O_WRONLY | os.O_EXCL
		if appendTo {
			flag = os.O_WRONLY | os.O_APPEND
		}
		f, err := os.OpenFile(filepath.Join(in, name), flag, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(b.String()); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	interrupts, kills, terms := 0, 0, 0
	// took is about how long a run takes to read all its input: the
	// delay of an interruption is a random share of it, so that it comes
	// while the job runs, however fast the machine.
	took := 500 * time.Millisecond
	for phase := 1; phase <= filePhases; phase++ {
		// New files, one sorting before every other; an existing file
		// extended; some files read to their end archived.
		names, _ := filepath.Glob(filepath.Join(in, "*.jsonl"))
		for i := range 3 {
			addFile(fmt.Sprintf("p%d-%d.jsonl", phase, i), fileRowsPerPhase/4+rng.IntN(fileRowsPerPhase/4), false)
		}
		addFile(fmt.Sprintf("0-early-p%d.jsonl", phase), fileRowsPerPhase/8, false)
		if len(names) > 0 {
			grown := names[rng.IntN(len(names))]
			addFile(filepath.Base(grown), fileRowsPerPhase/8, true)
			rng.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
			for _, n := range names[:len(names)/2] {
				if n == grown {
					continue
				}
				if err := os.Rename(n, filepath.Join(archive, filepath.Base(n))); err != nil {
					t.Fatal(err)
				}
			}
		}
		for run := 1; ; run++ {
			log := filepath.Join(dir, fmt.Sprintf("phase%d-run%d.log", phase, run))
			p := startJob(t, bin, sqlPath, log)
			if run > fileInterrupts {
				r := p.wait(t, runTimeout)
				if !r.ok() {
					t.Fatalf("phase %d, run %d: %s\n%s", phase, run, r, tail(log))
				}
				took = r.took
				break
			}
			delay := time.Duration(rng.Int64N(int64(took)))
			if rng.IntN(4) == 0 {
				delay = time.Duration(rng.Int64N(int64(50 * time.Millisecond))) // while it starts
			}
			sig := syscall.SIGKILL
			if rng.IntN(3) == 0 {
				sig = syscall.SIGTERM
			}
			select {
			case <-p.done:
				r := p.result(false)
				if !r.ok() {
					t.Fatalf("phase %d, run %d: %s\n%s", phase, run, r, tail(log))
				}
				t.Logf("phase %d: run %d ended by itself after %v, before its interruption (%v)", phase, run, r.took.Round(time.Millisecond), delay.Round(time.Millisecond))
				took = r.took
			case <-time.After(delay):
				p.cmd.Process.Signal(sig)
				<-p.done
				r := p.result(sig == syscall.SIGKILL)
				switch {
				case sig == syscall.SIGKILL && r.killed:
					kills++
				case sig == syscall.SIGTERM && r.ok():
					terms++ // stopped: its last checkpoint committed
				case sig == syscall.SIGTERM && (r.err != nil && strings.Contains(r.err.Error(), "signal terminated") || r.code == 143):
					// It came before the process handled signals, or the
					// stop took longer than --stop-timeout: as good as a
					// kill.
					kills++
				case r.ok():
					// It ended by itself as the signal came.
				default:
					t.Fatalf("phase %d, run %d, after %v: %s\n%s", phase, run, sig, r, tail(log))
				}
				interrupts++
				switch job {
				case "filter", "set":
					checkWhole(t, filepath.Join(dir, "out"))
				case "partitioned":
					pdirs, _ := filepath.Glob(filepath.Join(dir, "pout", "b=*"))
					for _, d := range pdirs {
						checkWhole(t, d)
					}
				}
				continue
			}
			break
		}
		t.Logf("phase %d done: %d input rows so far", phase, len(rows))
	}
	t.Logf("%d interruptions: %d SIGKILLs, %d SIGTERMs", interrupts, kills, terms)
	if kills < filePhases {
		t.Errorf("only %d SIGKILLs came while the job ran, want at least %d", kills, filePhases)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*", ".*.inprogress")); len(left) > 0 {
		t.Errorf("in-progress files left after the last run ended: %v", left)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*.inprogress")); len(left) > 0 {
		t.Errorf("in-progress files left after the last run ended: %v", left)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "pout", "*", ".*.inprogress")); len(left) > 0 {
		t.Errorf("in-progress files left after the last run ended: %v", left)
	}
	switch job {
	case "filter":
		checkFilter(t, dir, rows)
	case "count":
		checkCounts(t, dir, rows)
	case "set":
		checkFilter(t, dir, rows)
		checkCounts(t, dir, rows)
	case "partitioned":
		checkPartitioned(t, dir, rows)
	}
}

// checkPartitioned checks the "partitioned" job's output: every row that
// passes the filter once, in its bucket's directory, and every partition
// directory committed with its success file.
func checkPartitioned(t *testing.T, dir string, rows []fileRow) {
	want := map[int64]string{}
	for _, r := range rows {
		if r.v%4 != 0 {
			want[r.id] = fmt.Sprintf("b=b%d|%s|%d", r.v%5, strings.ToUpper(r.k), r.v)
		}
	}
	got := map[int64]int{}
	var wrong []string
	pdirs, _ := filepath.Glob(filepath.Join(dir, "pout", "b=*"))
	nfiles := 0
	for _, pd := range pdirs {
		if _, err := os.Stat(filepath.Join(pd, "_SUCCESS")); err != nil {
			t.Errorf("partition %s has no success file: %v", filepath.Base(pd), err)
		}
		files, _ := filepath.Glob(filepath.Join(pd, "part-*"))
		nfiles += len(files)
		readParts(t, files, filepath.Base(pd)+"|", want, got, &wrong)
	}
	checkOnce(t, want, got, wrong, fmt.Sprintf("%d part files in %d partitions", nfiles, len(pdirs)))
}

// checkWhole fails if a visible file of dir ends in a torn line.
func checkWhole(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") || e.Name() == "_SUCCESS" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if len(data) == 0 || data[len(data)-1] != '\n' {
			t.Fatalf("visible file %s is empty or ends in a torn line", e.Name())
		}
	}
}

func checkFilter(t *testing.T, dir string, rows []fileRow) {
	want := map[int64]string{}
	for _, r := range rows {
		if r.v%4 != 0 {
			want[r.id] = fmt.Sprintf("%s|%d", strings.ToUpper(r.k), r.v)
		}
	}
	got := map[int64]int{}
	var wrong []string
	files, _ := filepath.Glob(filepath.Join(dir, "out", "part-*"))
	readParts(t, files, "", want, got, &wrong)
	checkOnce(t, want, got, wrong, fmt.Sprintf("%d part files", len(files)))
}

// readParts counts in got the rows of the part files by id, and adds to
// wrong those that are not as want says (prefix, then "K|V"). A line that
// is not a whole row fails the test.
func readParts(t *testing.T, files []string, prefix string, want map[int64]string, got map[int64]int, wrong *[]string) {
	t.Helper()
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			var row struct {
				ID *int64
				K  string
				V  int64
			}
			if err := json.Unmarshal([]byte(l), &row); err != nil || row.ID == nil {
				t.Fatalf("%s: a line that is not a whole row: %q", f, l)
			}
			got[*row.ID]++
			if w, ok := want[*row.ID]; !ok || w != fmt.Sprintf("%s%s|%d", prefix, row.K, row.V) {
				*wrong = append(*wrong, prefix+l)
			}
		}
	}
}

// checkOnce fails unless every wanted row was read exactly once and no
// other: where says what was read.
func checkOnce(t *testing.T, want map[int64]string, got map[int64]int, wrong []string, where string) {
	t.Helper()
	var missing, dup []int64
	for id := range want {
		switch got[id] {
		case 0:
			missing = append(missing, id)
		case 1:
		default:
			dup = append(dup, id)
		}
	}
	slices.Sort(missing)
	slices.Sort(dup)
	if len(missing)+len(dup)+len(wrong) > 0 {
		t.Fatalf("%s: %d rows missing (first %v), %d written more than once (first %v), %d wrong or unexpected (first %v)",
			where, len(missing), missing[:min(10, len(missing))], len(dup), dup[:min(10, len(dup))], len(wrong), wrong[:min(5, len(wrong))])
	}
	t.Logf("%d rows in %s, each once", len(want), where)
}

func checkCounts(t *testing.T, dir string, rows []fileRow) {
	type agg struct{ n, s int64 }
	want := map[string]agg{}
	for _, r := range rows {
		a := want[r.k]
		a.n++
		a.s += r.v
		want[r.k] = a
	}
	data, err := os.ReadFile(filepath.Join(dir, "counts.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	type image struct {
		K string
		N int64
		S int64
	}
	cur := map[string]agg{}
	for i, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		var rec struct {
			Before *image
			After  *image
			Op     string
		}
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("counts.jsonl line %d is not a whole record: %q", i+1, l)
		}
		switch rec.Op {
		case "c":
			if _, ok := cur[rec.After.K]; ok {
				t.Fatalf("line %d inserts key %s, which is there: a row written twice", i+1, rec.After.K)
			}
			cur[rec.After.K] = agg{rec.After.N, rec.After.S}
		case "d":
			if c, ok := cur[rec.Before.K]; !ok || c != (agg{rec.Before.N, rec.Before.S}) {
				t.Fatalf("line %d retracts %s %+v, but the row written last was %+v: a row written twice or lost", i+1, rec.Before.K, rec.Before, c)
			}
			delete(cur, rec.Before.K)
		default:
			t.Fatalf("line %d: op %q", i+1, rec.Op)
		}
	}
	for k, w := range want {
		if cur[k] != w {
			t.Errorf("key %s: count and sum %+v, want %+v", k, cur[k], w)
		}
	}
	if len(cur) != len(want) {
		t.Errorf("%d keys, want %d", len(cur), len(want))
	}
	t.Logf("%d keys, %d changelog records, every key exact", len(want), strings.Count(string(data), "\n"))
}
