package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// stateJob counts the rows of in.jsonl per key, with its state in state/.
const stateJob = `SET 'state.dir' = './state';
CREATE TABLE events (k STRING) WITH ('connector' = 'filesystem', 'path' = 'in.jsonl', 'format' = 'json');
CREATE TABLE out (k STRING, n BIGINT) WITH ('connector' = 'print');
INSERT INTO out SELECT k, COUNT(*) AS n FROM events GROUP BY k;
`

// stateCase writes the job and its input into a new directory, runs the
// job once, and returns the directory.
func stateCase(t *testing.T, dir string) {
	t.Helper()
	var in strings.Builder
	for i := 0; i < 30; i++ {
		in.WriteString(`{"k":"a` + string(rune('0'+i%3)) + `"}` + "\n")
	}
	for name, s := range map[string]string{"job.sql": stateJob, "in.jsonl": in.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if res := e2eRun(t, dir, "run", "job.sql"); res.code != 0 {
		t.Fatalf("first run: exit %d\n%s", res.code, res.stderr)
	}
}

// wantFailed checks that sluice exited non-zero with each of wants on
// standard error, and no Go stack trace.
func wantFailed(t *testing.T, res e2eResult, wants ...string) {
	t.Helper()
	t.Logf("exit %d, stderr:\n%s", res.code, res.stderr)
	if res.code == 0 {
		t.Fatal("sluice exited 0 over a damaged state directory")
	}
	for _, w := range wants {
		if !strings.Contains(res.stderr, w) {
			t.Errorf("standard error should say %q", w)
		}
	}
	if strings.Contains(res.stderr, "goroutine ") || strings.Contains(res.stderr, "panic:") {
		t.Error("standard error holds a stack trace")
	}
}

// A state directory whose write-ahead log is gone: `sluice run` refuses
// it (it used to count from scratch and exit 0), until told to start
// fresh.
func TestStateDirMissingLogExits(t *testing.T) {
	dir := t.TempDir()
	stateCase(t, dir)
	logs, _ := filepath.Glob(filepath.Join(dir, "state", "*.log"))
	for _, l := range logs {
		os.Remove(l)
	}
	wantFailed(t, e2eRun(t, dir, "run", "job.sql"), "lost committed checkpoints", "state.start-fresh")
	if res := e2eRun(t, dir, "run", "-D", "state.start-fresh=true", "job.sql"); res.code != 0 {
		t.Fatalf("started fresh: exit %d\n%s", res.code, res.stderr)
	}
}

// A corrupt table file of the state: an error naming it (Pebble's
// Logger.Fatalf used to panic).
func TestStateDirCorruptTableExits(t *testing.T) {
	dir := t.TempDir()
	stateCase(t, dir)
	stateDir := filepath.Join(dir, "state")
	db, err := pebble.Open(stateDir, &pebble.Options{Logger: quietLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	ssts, _ := filepath.Glob(filepath.Join(stateDir, "*.sst"))
	if len(ssts) == 0 {
		t.Fatal("no table file")
	}
	data, err := os.ReadFile(ssts[0])
	if err != nil {
		t.Fatal(err)
	}
	for i := 64; i < len(data)/2; i += 97 {
		data[i] ^= 0x5a
	}
	if err := os.WriteFile(ssts[0], data, 0o644); err != nil {
		t.Fatal(err)
	}
	wantFailed(t, e2eRun(t, dir, "run", "job.sql"), filepath.Base(ssts[0])+" is corrupt", "rm -r ./state")
}

type quietLogger struct{}

func (quietLogger) Infof(string, ...any)  {}
func (quietLogger) Errorf(string, ...any) {}
func (quietLogger) Fatalf(f string, a ...any) {
	panic("pebble: " + f)
}

// A full disk under the state (a small tmpfs; skipped without the
// privilege to mount one): an error, not a panic (Pebble's log rotation
// used to panic).
func TestStateDirFullExits(t *testing.T) {
	dir := t.TempDir()
	stateDir := filepath.Join(dir, "state")
	if err := os.Mkdir(stateDir, 0o755); err != nil {
		t.Fatal(err)
	}
	mountTmpfs(t, stateDir, "24m")
	stateCase(t, dir)
	f, err := os.Create(filepath.Join(stateDir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	for buf := make([]byte, 64<<10); ; {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	f.Close()
	wantFailed(t, e2eRun(t, dir, "run", "job.sql"), "no space left on device", "free space")
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
