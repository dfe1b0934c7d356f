package main

// End-to-end tests of the sluice binary.
//
// Every directory testdata/e2e/<case>/ holds a job.sql, its input files and
// an expected/ directory. The test copies the case (without expected/) into
// a temporary directory, runs `sluice run job.sql` there and checks:
//
//   - the exit code: 0, or the number in expected/exit-code;
//   - every other file expected/<name> against the file <name> the job
//     wrote, as a sorted multiset of lines (parallel jobs may reorder rows);
//     <name> may be a path (expected/out/dt=x/_SUCCESS), and a name ending
//     in .parts (expected/out/dt=x.parts) stands for the lines of all the
//     part files (part-*) of that directory, whose names are not known in
//     advance; an expected _SUCCESS file must have been written;
//   - expected/stderr, if present, exactly against standard error;
//   - expected/stderr-contains, if present: each of its non-empty lines
//     must appear within some line of standard error. A line that begins
//     with a space (a caret line under an error position) must match the
//     beginning of a standard error line, so that the caret's column counts.
//
// A few cases need more input than is worth committing; e2eGenerators
// writes their input files and, where the expected output is too large to
// compute by hand, computes it with plain Go code.
//
// `go test ./cmd/sluice -run TestEndToEnd -update` rewrites the expected
// output files (and expected/stderr) from what the binary produced. Check
// every rewritten line by hand before committing it: an expected file
// records what is right, not what the engine happens to do.

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

var e2eUpdate = flag.Bool("update", false, "rewrite testdata/e2e expected outputs from actual outputs (verify them by hand)")

// e2eCasesDir holds the end-to-end cases, relative to this package.
const e2eCasesDir = "../../testdata/e2e"

// e2eRunTimeout bounds one run of the binary so that a job that never ends
// fails its case instead of hanging the whole test. It is a guard, not an
// assertion on speed.
const e2eRunTimeout = 2 * time.Minute

// e2eBin is the binary TestMain builds, or e2eBuildErr why it could not.
var (
	e2eBin      string
	e2eBuildErr error
)

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "sluice-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "cannot create a directory for the sluice binary:", err)
		os.Exit(1)
	}
	e2eBin, e2eBuildErr = e2eBuild(dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// e2eBuild builds this package's command into dir, with the race detector
// when the test binary itself has it.
func e2eBuild(dir string) (string, error) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("cannot find the go command: %w", err)
	}
	bin := filepath.Join(dir, "sluice")
	args := []string{"build", "-o", bin}
	if e2eRaceEnabled() {
		args = append(args, "-race")
	}
	cmd := exec.Command(gobin, append(args, ".")...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("cannot build the sluice binary: %w\n%s", err, out.Bytes())
	}
	return bin, nil
}

func e2eRaceEnabled() bool {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range info.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

func e2eBinary(t *testing.T) string {
	t.Helper()
	if e2eBuildErr != nil {
		t.Fatal(e2eBuildErr)
	}
	return e2eBin
}

// e2eResult is what one run of the binary did.
type e2eResult struct {
	code           int
	stdout, stderr string
}

// e2eRun runs the binary with args in dir.
func e2eRun(t *testing.T, dir string, args ...string) e2eResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e2eRunTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, e2eBinary(t), args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("sluice %s did not end within %v\nstderr:\n%s", strings.Join(args, " "), e2eRunTimeout, stderr.Bytes())
	}
	res := e2eResult{stdout: stdout.String(), stderr: stderr.String()}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		res.code = exitErr.ExitCode()
	default:
		t.Fatalf("cannot run sluice %s: %v", strings.Join(args, " "), err)
	}
	return res
}

// e2eGenerator writes a case's generated input files into dir and returns
// the expected contents (lines) of the output files it computes itself.
type e2eGenerator func(t *testing.T, dir string) map[string][]string

var e2eGenerators = map[string]e2eGenerator{
	"late-data":   e2eGenLateData,
	"over":        e2eGenOver,
	"parallel":    e2eGenParallel,
	"window-topn": e2eGenWindowTopN,
}

func TestEndToEnd(t *testing.T) {
	e2eBinary(t)
	jobs, err := filepath.Glob(filepath.Join(e2eCasesDir, "*", "job.sql"))
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) == 0 {
		t.Fatalf("no cases in %s", e2eCasesDir)
	}
	for _, job := range jobs {
		caseDir := filepath.Dir(job)
		t.Run(filepath.Base(caseDir), func(t *testing.T) {
			t.Parallel()
			e2eRunCase(t, caseDir)
		})
		for _, args := range e2eVariants[filepath.Base(caseDir)] {
			t.Run(filepath.Base(caseDir)+" "+strings.Join(args, " "), func(t *testing.T) {
				t.Parallel()
				e2eRunCase(t, caseDir, args...)
			})
		}
	}
}

// e2eVariants runs cases again with more arguments before "run": the
// same job must give the same output.
var e2eVariants = map[string][][]string{
	"lookup-join": {{"--dimension-spill-dir", "spill"}},
}

func e2eRunCase(t *testing.T, caseDir string, args ...string) {
	name := filepath.Base(caseDir)
	expDir := filepath.Join(caseDir, "expected")
	work := t.TempDir()
	e2eCopyCase(t, caseDir, work)
	var generated map[string][]string
	if gen, ok := e2eGenerators[name]; ok {
		generated = gen(t, work)
	}

	res := e2eRun(t, work, append(args, "run", "job.sql")...)

	wantCode := 0
	if b, err := os.ReadFile(filepath.Join(expDir, "exit-code")); err == nil {
		if wantCode, err = strconv.Atoi(strings.TrimSpace(string(b))); err != nil {
			t.Fatalf("expected/exit-code: %v", err)
		}
	}
	if res.code != wantCode {
		t.Errorf("exit code %d, want %d\nstderr:\n%s", res.code, wantCode, res.stderr)
	}

	var expected []string
	err := filepath.WalkDir(expDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(expDir, path)
		expected = append(expected, filepath.ToSlash(rel))
		return err
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	for _, f := range expected {
		switch f {
		case "exit-code":
		case "stderr":
			e2eCheckStderr(t, filepath.Join(expDir, f), res.stderr)
		case "stderr-contains":
			e2eCheckStderrContains(t, filepath.Join(expDir, f), res.stderr)
		default:
			want := e2eReadLines(t, filepath.Join(expDir, f))
			var got []string
			var ok bool
			if dir, parts := strings.CutSuffix(f, ".parts"); parts {
				got, ok = e2eParts(t, filepath.Join(work, dir))
			} else {
				got, ok = e2eOutput(t, work, f)
			}
			if path.Base(f) == "_SUCCESS" && !ok {
				t.Errorf("%s: not written", f)
			}
			if *e2eUpdate && ok {
				e2eRewrite(t, filepath.Join(expDir, f), got)
				continue
			}
			e2eCompare(t, f, got, ok, want, res.stderr)
		}
	}
	for _, f := range slices.Sorted(maps.Keys(generated)) {
		got, ok := e2eOutput(t, work, f)
		e2eCompare(t, f, got, ok, generated[f], res.stderr)
	}
}

// e2eCopyCase copies the case's files, except expected/, into dst.
func e2eCopyCase(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			if rel == "expected" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatalf("cannot copy case %s: %v", src, err)
	}
}

// e2eOutput returns the lines of the output file name in dir, and whether
// the file exists.
func e2eOutput(t *testing.T, dir, name string) ([]string, bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return e2eLines(b), true
}

// e2eParts reads the lines of the part files (part-*) of the directory
// dir, in any order: the expected file <dir>.parts holds them, since part
// file names are not known in advance.
func e2eParts(t *testing.T, dir string) ([]string, bool) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "part-*"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, e2eLines(b)...)
	}
	return lines, len(files) > 0
}

func e2eReadLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return e2eLines(b)
}

// e2eLines splits b into lines, dropping empty ones.
func e2eLines(b []byte) []string {
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSuffix(l, "\r"); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// e2eCompare compares got and want as multisets of lines and reports the
// lines missing from got and the lines got has in excess.
func e2eCompare(t *testing.T, name string, got []string, exists bool, want []string, stderr string) {
	t.Helper()
	if !exists {
		if len(want) > 0 {
			t.Errorf("%s: not written (want %d lines)\nstderr:\n%s", name, len(want), stderr)
		}
		return
	}
	missing, extra := e2eMultisetDiff(got, want)
	if len(missing) == 0 && len(extra) == 0 {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d lines, want %d", name, len(got), len(want))
	if len(missing) > 0 {
		b.WriteString("\nmissing (expected, not produced):")
		for _, l := range missing {
			b.WriteString("\n  " + l)
		}
	}
	if len(extra) > 0 {
		b.WriteString("\nunexpected (produced, not expected):")
		for _, l := range extra {
			b.WriteString("\n  " + l)
		}
	}
	if stderr != "" {
		b.WriteString("\nstderr:\n" + stderr)
	}
	t.Error(b.String())
}

// e2eMultisetDiff returns, sorted, the lines of want missing from got and
// the lines of got not in want, counting repetitions.
func e2eMultisetDiff(got, want []string) (missing, extra []string) {
	count := make(map[string]int, len(want))
	for _, l := range want {
		count[l]++
	}
	for _, l := range got {
		if count[l] > 0 {
			count[l]--
		} else {
			extra = append(extra, l)
		}
	}
	for _, l := range want {
		if count[l] > 0 {
			count[l]--
			missing = append(missing, l)
		}
	}
	slices.Sort(missing)
	slices.Sort(extra)
	return missing, extra
}

func e2eCheckStderr(t *testing.T, path, stderr string) {
	t.Helper()
	if *e2eUpdate {
		e2eRewrite(t, path, e2eLines([]byte(stderr)))
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if stderr != string(want) {
		t.Errorf("stderr:\n%s\nwant:\n%s", stderr, want)
	}
}

func e2eCheckStderrContains(t *testing.T, path, stderr string) {
	t.Helper()
	lines := strings.Split(stderr, "\n")
	for _, want := range e2eReadLines(t, path) {
		anchored := strings.HasPrefix(want, " ")
		found := slices.ContainsFunc(lines, func(l string) bool {
			if anchored {
				return strings.HasPrefix(l, want)
			}
			return strings.Contains(l, want)
		})
		if !found {
			t.Errorf("stderr has no line containing %q\nstderr:\n%s", want, stderr)
		}
	}
}

// e2eRewrite writes lines, sorted, to path (the -update mode).
func e2eRewrite(t *testing.T, path string, lines []string) {
	t.Helper()
	lines = slices.Clone(lines)
	if filepath.Base(path) != "stderr" {
		slices.Sort(lines)
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("rewrote %s: verify it by hand", path)
}

// e2eBidLine formats one row of the bids tables as Flink's json format
// reads it; cents is the price in hundredths.
func e2eBidLine(ts time.Time, cents int64, item, supplier string) string {
	return fmt.Sprintf(`{"bidtime":"%s","price":%s,"item":"%s","supplier_id":"%s"}`,
		e2eTimestamp(ts), e2eCents(cents), item, supplier)
}

// e2eTimestamp formats a TIMESTAMP(3) as Flink's json format does: fraction
// digits only when not zero.
func e2eTimestamp(ts time.Time) string {
	return ts.UTC().Format("2006-01-02 15:04:05.999")
}

// e2eCents formats hundredths as a DECIMAL with scale 2.
func e2eCents(c int64) string {
	sign := ""
	if c < 0 {
		sign, c = "-", -c
	}
	return fmt.Sprintf("%s%d.%02d", sign, c/100, c%100)
}

func e2eWriteLines(t *testing.T, path string, lines []string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// e2eBase is the day of Flink's Bid table.
var e2eBase = time.Date(2020, 4, 15, 8, 0, 0, 0, time.UTC)

// e2eGenLateData writes late-data/bids.jsonl (see that job.sql): more rows
// than one read batch holds before the late row, so that the watermark has
// certainly moved past the late row's window when it is read. The expected
// output is committed.
func e2eGenLateData(t *testing.T, dir string) map[string][]string {
	var lines []string
	for i := range 1100 {
		ts := e2eBase.Add(20*time.Minute + time.Duration(i)*500*time.Millisecond)
		lines = append(lines, e2eBidLine(ts, 100, "X", "supplier1"))
	}
	lines = append(lines,
		e2eBidLine(e2eBase.Add(3*time.Minute), 10000, "X", "supplier1"),
		e2eBidLine(e2eBase.Add(20*time.Minute+30*time.Second), 50, "X", "supplier1"),
		e2eBidLine(e2eBase.Add(35*time.Minute), 200, "X", "supplier2"),
	)
	e2eWriteLines(t, filepath.Join(dir, "bids.jsonl"), lines)
	return nil
}

// e2eGenWindowTopN writes window-topn/bids.jsonl (see that job.sql); the
// expected output is committed.
func e2eGenWindowTopN(t *testing.T, dir string) map[string][]string {
	at := func(min, sec int) time.Time {
		return e2eBase.Add(time.Duration(min)*time.Minute + time.Duration(sec)*time.Second)
	}
	lines := []string{
		e2eBidLine(at(1, 0), 400, "A", "s1"), e2eBidLine(at(2, 0), 500, "B", "s2"),
		e2eBidLine(at(3, 0), 400, "C", "s1"), e2eBidLine(at(4, 0), 500, "D", "s1"),
		e2eBidLine(at(5, 0), 300, "E", "s2"), e2eBidLine(at(6, 0), 400, "F", "s2"),
		e2eBidLine(at(11, 0), 200, "G", "s1"), e2eBidLine(at(12, 0), 200, "H", "s2"),
		e2eBidLine(at(19, 0), 100, "I", "s1"),
	}
	for i := range 1100 {
		lines = append(lines, e2eBidLine(at(60, 0).Add(time.Duration(i)*500*time.Millisecond), int64(i), "Z", "s3"))
	}
	lines = append(lines, e2eBidLine(at(7, 0), 10000, "X", "s1"), e2eBidLine(at(65, 0), 2000, "J", "s2"),
		e2eBidLine(at(75, 0), 700, "K", "s1"))
	e2eWriteLines(t, filepath.Join(dir, "bids.jsonl"), lines)
	return nil
}

// e2eGenOver writes over/bids.jsonl (see that job.sql): a read batch's
// worth of rows of item X first, so that the watermark has passed the late
// row of item Y when it is read. The expected output is committed.
func e2eGenOver(t *testing.T, dir string) map[string][]string {
	var lines []string
	for i := range 1100 {
		ts := e2eBase.Add(20*time.Minute + time.Duration(i)*500*time.Millisecond)
		lines = append(lines, e2eBidLine(ts, 100, "X", "supplier1"))
	}
	for _, b := range []struct {
		at    time.Duration
		cents int64
	}{
		{3 * time.Minute, 10000},
		{30 * time.Minute, 200},
		{31*time.Minute + 30*time.Second, 500},
		{30 * time.Minute, 300},
		{30*time.Minute + 20*time.Second, 400},
		{40 * time.Minute, 100},
	} {
		lines = append(lines, e2eBidLine(e2eBase.Add(b.at), b.cents, "Y", "supplier2"))
	}
	e2eWriteLines(t, filepath.Join(dir, "bids.jsonl"), lines)
	return nil
}

// e2eGenParallel writes parallel/bids.jsonl, 1000 bids over about two
// hours, 7 s apart and out of order by up to 10 s (row i is at most 3 s
// behind the rows before it, less than the 5 s watermark delay, so no row
// is late), and computes the 10-minute tumbling totals per item directly.
func e2eGenParallel(t *testing.T, dir string) map[string][]string {
	type key struct {
		start int64
		item  string
	}
	type total struct{ n, cents int64 }
	const size = int64(10 * time.Minute / time.Microsecond)
	totals := map[key]*total{}
	var lines []string
	for i := range 1000 {
		ts := e2eBase.Add(time.Duration(i)*7*time.Second + time.Duration((i*13)%11)*time.Second)
		cents := int64((i*37)%1000 + 1)
		item := "k" + strconv.Itoa((i*i)%7)
		lines = append(lines, e2eBidLine(ts, cents, item, "supplier"+strconv.Itoa(i%3)))
		us := ts.UnixMicro()
		start := us - ((us%size)+size)%size
		k := key{start, item}
		if totals[k] == nil {
			totals[k] = &total{}
		}
		totals[k].n++
		totals[k].cents += cents
	}
	e2eWriteLines(t, filepath.Join(dir, "bids.jsonl"), lines)
	var want []string
	for k, v := range totals {
		want = append(want, fmt.Sprintf(`{"window_start":"%s","window_end":"%s","item":"%s","bids":%d,"total":%s}`,
			e2eTimestamp(time.UnixMicro(k.start)), e2eTimestamp(time.UnixMicro(k.start+size)), k.item, v.n, e2eCents(v.cents)))
	}
	return map[string][]string{"totals.jsonl": want}
}

// TestExplain checks that `sluice explain` prints the plan of the tumble
// case as a tree with its window aggregate and its source scan.
func TestExplain(t *testing.T) {
	work := t.TempDir()
	e2eCopyCase(t, filepath.Join(e2eCasesDir, "tumble"), work)
	res := e2eRun(t, work, "explain", "job.sql")
	if res.code != 0 {
		t.Fatalf("exit code %d\nstderr:\n%s", res.code, res.stderr)
	}
	for _, want := range []string{"WindowAggregate", "TableSourceScan"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("the plan does not mention %s:\n%s", want, res.stdout)
		}
	}
	if _, err := os.Stat(filepath.Join(work, "totals.jsonl")); err == nil {
		t.Errorf("explain ran the job: totals.jsonl was written")
	}
}

// TestHelp checks that help is not an error.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"run", "--help"}} {
		res := e2eRun(t, t.TempDir(), args...)
		if res.code != 0 {
			t.Errorf("sluice %s: exit code %d\nstderr:\n%s", strings.Join(args, " "), res.code, res.stderr)
		}
		if !strings.Contains(res.stdout, "Usage:") {
			t.Errorf("sluice %s: no usage in the output:\n%s", strings.Join(args, " "), res.stdout)
		}
	}
}
