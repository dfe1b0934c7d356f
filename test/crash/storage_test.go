package crash_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// TestStorageFaults runs a `sluice run` job whose state is in 'state.dir'
// (a filter from a file into a file, exactly-once by checkpoints) over
// faults of its storage, and checks that each one stops it with a clear
// error and a non-zero exit, never with a panic, and never by starting
// over from an empty state:
//
//   - full disk: a tmpfs under the state fills up while the job runs (the
//     test mounts one, and skips this case without the privilege); with
//     space freed, the job resumes and the output is exact;
//   - lost log: the job is killed (SIGKILL) mid-run and its write-ahead
//     log removed; the next run is refused;
//   - corrupt table: a table file of the state has bytes flipped; the next
//     run fails naming it.
//
// It runs with the crash test (SLUICE_CRASH_TEST=1), in a few seconds.
func TestStorageFaults(t *testing.T) {
	if os.Getenv("SLUICE_CRASH_TEST") != "1" {
		t.Skip("set SLUICE_CRASH_TEST=1 to run the crash test")
	}
	dir := t.TempDir()
	bin := buildSluice(t, dir, os.Getenv("SLUICE_CRASH_RACE") == "1")
	in := filepath.Join(dir, "in.jsonl")
	want := writeFaultInput(t, in, 1_000_000)

	t.Run("full disk", func(t *testing.T) {
		d := t.TempDir()
		disk := filepath.Join(d, "disk")
		if err := os.Mkdir(disk, 0o755); err != nil {
			t.Fatal(err)
		}
		mountTmpfs(t, disk, "32m")
		job := faultJob(t, d, in, filepath.Join(disk, "state"))
		out := filepath.Join(d, "out.jsonl")
		p := startJob(t, bin, job, filepath.Join(d, "run-1.log"))
		if !waitForOutput(p, out) {
			t.Fatalf("the job ended before its first checkpoint: %v\n%s", p.result(false), tail(filepath.Join(d, "run-1.log")))
		}
		filler := filepath.Join(disk, "filler")
		fillDisk(t, filler)
		r := p.wait(t, time.Minute)
		if r.ok() {
			t.Skip("the job ended before the disk was full: give it more input")
		}
		wantFailure(t, r, filepath.Join(d, "run-1.log"), "no space left on device", "free space")
		os.Remove(filler)
		if r := startJob(t, bin, job, filepath.Join(d, "run-2.log")).wait(t, time.Minute); !r.ok() {
			t.Fatalf("run 2 %v\n%s", r, tail(filepath.Join(d, "run-2.log")))
		}
		checkFaultOutput(t, out, want)
	})

	t.Run("lost log", func(t *testing.T) {
		d := t.TempDir()
		state := filepath.Join(d, "state")
		job := faultJob(t, d, in, state)
		p := startJob(t, bin, job, filepath.Join(d, "run-1.log"))
		if !waitForOutput(p, filepath.Join(d, "out.jsonl")) {
			t.Fatalf("the job ended before its first checkpoint: %v", p.result(false))
		}
		if r := p.killAfter(t, 0); !r.killed {
			t.Skipf("the job ended before it was killed: %v", r)
		}
		logs, _ := filepath.Glob(filepath.Join(state, "*.log"))
		for _, l := range logs {
			if err := os.Remove(l); err != nil {
				t.Fatal(err)
			}
		}
		r := startJob(t, bin, job, filepath.Join(d, "run-2.log")).wait(t, time.Minute)
		wantFailure(t, r, filepath.Join(d, "run-2.log"), "lost committed checkpoints", "state.start-fresh")
	})

	t.Run("corrupt table", func(t *testing.T) {
		d := t.TempDir()
		state := filepath.Join(d, "state")
		job := faultJob(t, d, in, state)
		if r := startJob(t, bin, job, filepath.Join(d, "run-1.log")).wait(t, time.Minute); !r.ok() {
			t.Fatalf("run 1 %v\n%s", r, tail(filepath.Join(d, "run-1.log")))
		}
		db, err := pebble.Open(state, &pebble.Options{Logger: pebbleQuiet{}})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		ssts, _ := filepath.Glob(filepath.Join(state, "*.sst"))
		if len(ssts) == 0 {
			t.Fatal("no table file")
		}
		for _, f := range ssts {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for i := 64; i < len(data)-64; i += 97 {
				data[i] ^= 0x5a
			}
			if err := os.WriteFile(f, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		r := startJob(t, bin, job, filepath.Join(d, "run-2.log")).wait(t, time.Minute)
		wantFailure(t, r, filepath.Join(d, "run-2.log"), ".sst is corrupt", "rm -r "+state)
	})
}

// writeFaultInput writes n rows {"id", "v"} to path and returns the rows
// the job keeps (v % 3 = 0), as its sink writes them, each once.
func writeFaultInput(t *testing.T, path string, n int) map[string]int {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	want := map[string]int{}
	for i := 0; i < n; i++ {
		v := (i * 7919) % 1000
		fmt.Fprintf(w, "{\"id\":%d,\"v\":%d}\n", i, v)
		if v%3 == 0 {
			want[fmt.Sprintf("{\"id\":%d,\"v\":%d}", i, v)]++
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return want
}

// faultJob writes the job's SQL into dir and returns its path; the job
// writes dir/out.jsonl.
func faultJob(t *testing.T, dir, in, state string) string {
	t.Helper()
	src := fmt.Sprintf(`SET 'state.dir' = '%s';
SET 'execution.checkpointing.interval' = '50ms';
CREATE TABLE events (id BIGINT, v BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE TABLE out (id BIGINT, v BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
INSERT INTO out SELECT id, v FROM events WHERE v %% 3 = 0;
`, state, in, filepath.Join(dir, "out.jsonl"))
	path := filepath.Join(dir, "job.sql")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// waitForOutput waits until the job has committed output (so, a
// checkpoint); false if it ended first.
func waitForOutput(p *proc, out string) bool {
	for {
		if fi, err := os.Stat(out); err == nil && fi.Size() > 0 {
			return true
		}
		select {
		case <-p.done:
			return false
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// fillDisk writes path until its disk is full.
func fillDisk(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for buf := make([]byte, 64<<10); ; {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			return
		}
	}
}

// wantFailure checks that a run exited with a non-zero code, its log
// saying each of wants, and holding no Go stack trace.
func wantFailure(t *testing.T, r runResult, log string, wants ...string) {
	t.Helper()
	b, _ := os.ReadFile(log)
	if r.killed || r.err != nil || r.code == 0 {
		t.Fatalf("the run %v, want a failure with a message\n%s", r, tail(log))
	}
	for _, w := range wants {
		if !bytes.Contains(b, []byte(w)) {
			t.Errorf("the log should say %q\n%s", w, tail(log))
		}
	}
	if bytes.Contains(b, []byte("goroutine ")) || bytes.Contains(b, []byte("panic:")) {
		t.Errorf("the log holds a stack trace\n%s", tail(log))
	}
	t.Logf("the run %v:\n%s", r, tail(log))
}

// checkFaultOutput compares the sink's file with the rows the job keeps:
// each once.
func checkFaultOutput(t *testing.T, out string, want map[string]int) {
	t.Helper()
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		got[l]++
	}
	var missing, extra int
	for k, n := range want {
		if got[k] < n {
			missing += n - got[k]
		}
	}
	for k, n := range got {
		if n > want[k] {
			extra += n - want[k]
		}
	}
	if missing != 0 || extra != 0 {
		t.Fatalf("%s: %d rows missing, %d extra (of %d)", out, missing, extra, len(want))
	}
}

type pebbleQuiet struct{}

func (pebbleQuiet) Infof(string, ...any)  {}
func (pebbleQuiet) Errorf(string, ...any) {}
func (pebbleQuiet) Fatalf(f string, a ...any) {
	panic("pebble: " + f)
}

// mountTmpfs mounts a tmpfs of the given size at dir, unmounted when the
// test ends, or skips the test where that cannot be done (it takes the
// privilege to mount, and Linux).
func mountTmpfs(t *testing.T, dir, size string) {
	t.Helper()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
}
