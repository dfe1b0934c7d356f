package sluice_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// lastCounts returns the last count printed for every key by a
// `SELECT k, COUNT(*) ... GROUP BY k` job.
func lastCounts(out string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "+I[") || strings.HasPrefix(l, "+U[") {
			k, v, _ := strings.Cut(strings.TrimSuffix(l[3:], "]"), ", ")
			m[k] = v
		} else if strings.HasPrefix(l, "-D[") {
			k, _, _ := strings.Cut(strings.TrimSuffix(l[3:], "]"), ", ")
			delete(m, k)
		}
	}
	return m
}

// keyLines returns n JSON lines {"k": "<prefix><i%keys>"}.
func keyLines(prefix string, n, keys int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "{\"k\":\"%s%d\"}\n", prefix, i%keys)
	}
	return b.String()
}

// Two unrelated jobs whose results go to tables of the same name share a
// 'state.dir'. The second reads another file: it must not resume from the
// first one's positions and counts (which made it print nothing and exit
// 0), but be refused, saying what differs; told to start afresh, it counts
// its own input from the start.
func TestStateBelongsToItsJob(t *testing.T) {
	dir := t.TempDir()
	stateDir := filepath.Join(dir, "state")
	writeFile(t, dir, "a.jsonl", keyLines("a", 30, 3))
	writeFile(t, dir, "b.jsonl", keyLines("b", 20, 2))
	job := func(file, extra string) string {
		return `SET 'state.dir' = '` + stateDir + `';
SET 'execution.checkpointing.interval' = '50ms';` + extra + `
CREATE TABLE events (k STRING) WITH ('connector' = 'filesystem', 'path' = '$DIR/` + file + `', 'format' = 'json');
CREATE TABLE out (k STRING, n BIGINT) WITH ('connector' = 'print');
INSERT INTO out SELECT k, COUNT(*) AS n FROM events GROUP BY k;`
	}
	out, err := runSQL(t, nil, dir, job("a.jsonl", ""))
	if err != nil {
		t.Fatal(err)
	}
	if got := lastCounts(out); len(got) != 3 || got["a0"] != "10" {
		t.Fatalf("first job: %v\n%s", got, out)
	}
	out, err = runSQL(t, nil, dir, job("b.jsonl", ""))
	if err == nil {
		t.Fatalf("a job reading b.jsonl ran over the state of a job reading a.jsonl:\n%s", out)
	}
	for _, want := range []string{"a.jsonl", "b.jsonl", "state.start-fresh"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error should name %q (what differs and what to do): %v", want, err)
		}
	}
	out, err = runSQL(t, nil, dir, job("b.jsonl", "\nSET 'state.start-fresh' = 'true';"))
	if err != nil {
		t.Fatal(err)
	}
	if got := lastCounts(out); len(got) != 2 || got["b0"] != "10" || got["b1"] != "10" {
		t.Fatalf("a fresh start should count all of b.jsonl: %v\n%s", got, out)
	}
	// The state is b's now: the job over b resumes (nothing new to count),
	// the one over a is refused.
	out, err = runSQL(t, nil, dir, job("b.jsonl", ""))
	if err != nil {
		t.Fatal(err)
	}
	if got := lastCounts(out); len(got) != 0 {
		t.Fatalf("b's job resumed after all of b.jsonl and should count nothing new: %v\n%s", got, out)
	}
	if _, err := runSQL(t, nil, dir, job("a.jsonl", "")); err == nil {
		t.Fatal("the job over a.jsonl ran over the state of the job over b.jsonl")
	}
}

// A job's operators are part of its identity: the same source counted
// another way must not fold into the other computation's state.
func TestStateBelongsToItsOperators(t *testing.T) {
	dir := t.TempDir()
	stateDir := filepath.Join(dir, "state")
	writeFile(t, dir, "a.jsonl", keyLines("a", 30, 3))
	job := func(agg string) string {
		return `SET 'state.dir' = '` + stateDir + `';
SET 'execution.checkpointing.interval' = '50ms';
CREATE TABLE events (k STRING) WITH ('connector' = 'filesystem', 'path' = '$DIR/a.jsonl', 'format' = 'json');
CREATE TABLE out (k STRING, n BIGINT) WITH ('connector' = 'print');
INSERT INTO out SELECT k, ` + agg + ` AS n FROM events GROUP BY k;`
	}
	if _, err := runSQL(t, nil, dir, job("COUNT(*)")); err != nil {
		t.Fatal(err)
	}
	_, err := runSQL(t, nil, dir, job("COUNT(DISTINCT k)"))
	if err == nil || !strings.Contains(err.Error(), "COUNT(DISTINCT") {
		t.Fatalf("got %v, want a refusal naming the changed aggregation", err)
	}
}

// A job name of one's own ('pipeline.name', as in Flink) keeps two jobs
// with sinks of the same name apart in one state directory.
func TestPipelineNameSeparatesState(t *testing.T) {
	dir := t.TempDir()
	stateDir := filepath.Join(dir, "state")
	writeFile(t, dir, "a.jsonl", keyLines("a", 30, 3))
	writeFile(t, dir, "b.jsonl", keyLines("b", 20, 2))
	job := func(name, file string) string {
		return `SET 'state.dir' = '` + stateDir + `';
SET 'execution.checkpointing.interval' = '50ms';
SET 'pipeline.name' = '` + name + `';
CREATE TABLE events (k STRING) WITH ('connector' = 'filesystem', 'path' = '$DIR/` + file + `', 'format' = 'json');
CREATE TABLE out (k STRING, n BIGINT) WITH ('connector' = 'print');
INSERT INTO out SELECT k, COUNT(*) AS n FROM events GROUP BY k;`
	}
	for _, c := range []struct {
		name, file string
		keys       int
	}{{"count-a", "a.jsonl", 3}, {"count-b", "b.jsonl", 2}} {
		out, err := runSQL(t, nil, dir, job(c.name, c.file))
		if err != nil {
			t.Fatal(err)
		}
		if got := lastCounts(out); len(got) != c.keys || got[c.file[:1]+"0"] != "10" {
			t.Fatalf("%s: %v\n%s", c.name, got, out)
		}
	}
}

// A directory source keeps a position per file, by the file's identity:
// a file added before the others is read from its start and does not
// shift the others' positions; a file archived (removed) is forgotten; a
// file rewritten in place is read again as new; a file appended to goes
// on after what was read.
func TestDirectorySourceResumesByFile(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	if err := os.Mkdir(in, 0o755); err != nil {
		t.Fatal(err)
	}
	src := `SET 'state.dir' = '` + filepath.Join(dir, "state") + `';
SET 'execution.checkpointing.interval' = '50ms';
CREATE TABLE events (k STRING) WITH ('connector' = 'filesystem', 'path' = '$DIR/in', 'format' = 'json');
SELECT k, COUNT(*) AS n FROM events GROUP BY k;`
	run := func(step string, want map[string]string) {
		t.Helper()
		out, err := runSQL(t, nil, dir, src)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		got := lastCounts(out)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: got %v, want %v\n%s", step, got, want, out)
		}
	}
	writeFile(t, in, "b.jsonl", keyLines("b", 10, 1))
	run("first run", map[string]string{"b0": "10"})

	// a.jsonl sorts before b.jsonl.
	writeFile(t, in, "a.jsonl", keyLines("a", 5, 1))
	run("a file added before the others", map[string]string{"a0": "5"})

	// Archive a.jsonl, add c.jsonl.
	if err := os.Rename(filepath.Join(in, "a.jsonl"), filepath.Join(dir, "a.jsonl.done")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, in, "c.jsonl", keyLines("c", 3, 1))
	run("a file archived, one added", map[string]string{"c0": "3"})

	// Append to b.jsonl: only the new lines count.
	f, err := os.OpenFile(filepath.Join(in, "b.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(keyLines("b", 2, 1))
	f.Close()
	run("a file appended to", map[string]string{"b0": "12"})

	// Rewrite c.jsonl in place (same inode, other content, longer): all
	// of it is new.
	writeFile(t, in, "c.jsonl", keyLines("x", 4, 1))
	run("a file rewritten in place", map[string]string{"x0": "4"})

	// Replace b.jsonl by another file (a new inode), shorter than what
	// was read of it.
	writeFile(t, dir, "b.new", keyLines("y", 1, 1))
	if err := os.Rename(filepath.Join(dir, "b.new"), filepath.Join(in, "b.jsonl")); err != nil {
		t.Fatal(err)
	}
	run("a file replaced", map[string]string{"y0": "1"})

	// The archived file comes back: it is read again, as a file never
	// seen (its position was forgotten).
	if err := os.Rename(filepath.Join(dir, "a.jsonl.done"), filepath.Join(in, "a.jsonl")); err != nil {
		t.Fatal(err)
	}
	run("an archived file restored", map[string]string{"a0": "10"})
}

// 'state.dir' alone makes a job resumable: without an explicit
// 'execution.checkpointing.interval' the job used to take no checkpoint,
// so a second run started over and counted every row twice.
func TestStateDirCheckpointsByDefault(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.jsonl", keyLines("a", 30, 3))
	src := `SET 'state.dir' = '` + filepath.Join(dir, "state") + `';
CREATE TABLE events (k STRING) WITH ('connector' = 'filesystem', 'path' = '$DIR/a.jsonl', 'format' = 'json');
SELECT k, COUNT(*) AS n FROM events GROUP BY k;`
	out, err := runSQL(t, nil, dir, src)
	if err != nil {
		t.Fatal(err)
	}
	if got := lastCounts(out); got["a0"] != "10" {
		t.Fatalf("first run: %v\n%s", got, out)
	}
	f, err := os.OpenFile(filepath.Join(dir, "a.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(keyLines("a", 3, 3))
	f.Close()
	out, err = runSQL(t, nil, dir, src)
	if err != nil {
		t.Fatal(err)
	}
	// Resumed, the counts go on from the restored ones (a run that
	// restored nothing would print +I[a0, 1] ... and end at 11 as well).
	if got := lastCounts(out); fmt.Sprint(got) != "map[a0:11 a1:11 a2:11]" || !strings.Contains(out, "-U[a0, 10]") || strings.Contains(out, "+I[") {
		t.Fatalf("second run should resume: %v\n%s", got, out)
	}
}

// The filesystem sink never truncates: a job run again appends what it
// computes after its restored position, and the output holds every row
// once.
func TestFileSinkKeepsEarlierOutput(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "in.jsonl", keyLines("a", 4, 4))
	src := `SET 'state.dir' = '` + filepath.Join(dir, "state") + `';
CREATE TABLE events (k STRING) WITH ('connector' = 'filesystem', 'path' = '$DIR/in.jsonl', 'format' = 'json');
CREATE TABLE out (k STRING) WITH ('connector' = 'filesystem', 'path' = '$DIR/out.jsonl', 'format' = 'json');
INSERT INTO out SELECT UPPER(k) FROM events;`
	if _, err := runSQL(t, nil, dir, src); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "in.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(keyLines("b", 2, 2))
	f.Close()
	if _, err := runSQL(t, nil, dir, src); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "out.jsonl"))
	want := `{"k":"A0"}` + "\n" + `{"k":"A1"}` + "\n" + `{"k":"A2"}` + "\n" + `{"k":"A3"}` + "\n" + `{"k":"B0"}` + "\n" + `{"k":"B1"}` + "\n"
	if string(got) != want {
		t.Fatalf("out.jsonl:\n%s\nwant:\n%s", got, want)
	}
}

// A job that fails at run time leaves the output as it was: what it wrote
// before failing was never committed.
func TestFileSinkFailedJobKeepsOutput(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "in.jsonl", `{"k":"1"}`+"\n"+`{"k":"x"}`+"\n")
	writeFile(t, dir, "out.jsonl", `{"n":7}`+"\n")
	_, err := runSQL(t, nil, dir, `
CREATE TABLE events (k STRING) WITH ('connector' = 'filesystem', 'path' = '$DIR/in.jsonl', 'format' = 'json');
CREATE TABLE out (n INT) WITH ('connector' = 'filesystem', 'path' = '$DIR/out.jsonl', 'format' = 'json');
INSERT INTO out SELECT CAST(k AS INT) FROM events;`)
	if err == nil {
		t.Fatal("CAST('x' AS INT) should fail the job")
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "out.jsonl")); string(got) != `{"n":7}`+"\n" {
		t.Fatalf("out.jsonl after a failed job:\n%s", got)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*inprogress")); len(left) != 0 {
		t.Fatalf("a failed job without state left %v", left)
	}
}

// A job must not write what it reads: a file sink over its own source
// would empty or grow its input.
func TestFileSinkRefusesOwnInput(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "in.jsonl", keyLines("a", 4, 4))
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "d"), "x.jsonl", keyLines("a", 4, 4))
	for _, path := range []string{"in.jsonl", "d"} {
		_, err := runSQL(t, nil, dir, `
CREATE TABLE events (k STRING) WITH ('connector' = 'filesystem', 'path' = '$DIR/`+path+`', 'format' = 'json');
CREATE TABLE out (k STRING) WITH ('connector' = 'filesystem', 'path' = '$DIR/`+path+`', 'format' = 'json');
INSERT INTO out SELECT k FROM events;`)
		if err == nil || !strings.Contains(err.Error(), "must not write its own input") {
			t.Fatalf("%s: got %v", path, err)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "in.jsonl")); string(got) != keyLines("a", 4, 4) {
		t.Fatalf("the input changed:\n%s", got)
	}
}

// Several INSERTs of a statement set into one output file: refused with a
// clear error (one file takes one writer); into a directory, each writes
// part files of its own and every row lands.
func TestFileSinkSeveralWriters(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "in.jsonl", keyLines("a", 4, 4))
	if err := os.Mkdir(filepath.Join(dir, "outdir"), 0o755); err != nil {
		t.Fatal(err)
	}
	job := func(path string) string {
		return `
CREATE TABLE events (k STRING) WITH ('connector' = 'filesystem', 'path' = '$DIR/in.jsonl', 'format' = 'json');
CREATE TABLE out (k STRING) WITH ('connector' = 'filesystem', 'path' = '$DIR/` + path + `', 'format' = 'json');
EXECUTE STATEMENT SET BEGIN
INSERT INTO out SELECT k FROM events;
INSERT INTO out SELECT UPPER(k) FROM events;
END;`
	}
	// Refused when planned, at the second INSERT's table, before anything
	// is read or written.
	_, err := runSQL(t, nil, dir, job("out.jsonl"))
	if err == nil || !strings.Contains(err.Error(), "test.sql:6:13: table 'out' writes the file "+filepath.Join(dir, "out.jsonl")+
		", which the INSERT at line 5, column 1 of this statement set writes too") {
		t.Fatalf("got %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "out.jsonl")); !os.IsNotExist(err) {
		t.Fatalf("the refused plan made its output file: %v", err)
	}
	if _, err := runSQL(t, nil, dir, job("outdir")); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "outdir", "part-*"))
	var lines []string
	for _, f := range files {
		data, _ := os.ReadFile(f)
		lines = append(lines, strings.Split(strings.TrimSpace(string(data)), "\n")...)
	}
	if len(files) != 2 || len(lines) != 8 {
		t.Fatalf("part files %v hold %v", files, lines)
	}
}

// A directory with more files than the process may have open is read: its
// files are opened as their turn comes ('source.max-open-files' at once),
// not all at the start.
func TestDirectorySourceOpensFilesAsRead(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	if err := os.Mkdir(in, 0o755); err != nil {
		t.Fatal(err)
	}
	// Each file is longer than the batches that the job's buffers hold,
	// so that a reader stays open until the job takes its rows.
	const files, rows = 400, 3000
	lines := keyLines("k", rows, 1)
	for i := range files {
		writeFile(t, in, fmt.Sprintf("f%03d.jsonl", i), lines)
	}
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	low := old
	low.Cur = 256
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Skipf("cannot lower the open-file limit: %v", err)
	}
	defer syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old)
	// Count the open descriptors while the job runs.
	var most atomic.Int64
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if es, err := os.ReadDir("/proc/self/fd"); err == nil && int64(len(es)) > most.Load() {
				most.Store(int64(len(es)))
			}
			time.Sleep(time.Millisecond)
		}
	}()
	out, err := runSQL(t, nil, dir, `
CREATE TABLE events (k STRING) WITH ('connector' = 'filesystem', 'path' = '$DIR/in', 'format' = 'json');
SELECT k, COUNT(*) AS n FROM events GROUP BY k;`)
	if err != nil {
		t.Fatal(err)
	}
	close(stop)
	<-stopped
	if got := lastCounts(out); got["k0"] != fmt.Sprint(rows*files) {
		t.Fatalf("got %v", got)
	}
	// 16 files at once, and the process's own descriptors.
	if most.Load() > 100 {
		t.Fatalf("%d descriptors were open at once", most.Load())
	}
}
