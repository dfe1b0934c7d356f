package sluice_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"github.com/sluicesql/sluice"
)

// Storage faults under 'state.dir': each fails the job with an error that
// says what happened and what to do, and a job is never resumed over an
// empty (or older) state in place of the one it committed.

// countJob counts the rows of in.jsonl per key, with its state in
// stateDir; extra is added after the SETs.
func countJob(stateDir, extra string) string {
	return `SET 'state.dir' = '` + stateDir + `';
SET 'execution.checkpointing.interval' = '50ms';` + extra + `
CREATE TABLE events (k STRING) WITH ('connector' = 'filesystem', 'path' = '$DIR/in.jsonl', 'format' = 'json');
CREATE TABLE out (k STRING, n BIGINT) WITH ('connector' = 'print');
INSERT INTO out SELECT k, COUNT(*) AS n FROM events GROUP BY k;`
}

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// wantFault checks that a run failed with an error saying every one of
// wants, and printed nothing (it did not start over).
func wantFault(t *testing.T, out string, err error, wants ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("the job ran over a damaged state directory:\n%s", out)
	}
	t.Logf("the job failed: %v", err)
	for _, w := range wants {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("the error should say %q:\n%v", w, err)
		}
	}
	if strings.Contains(out, "+I[") {
		t.Errorf("the job counted from scratch:\n%s", out)
	}
}

// wantResumed checks the output of a run over three more rows a0, a1, a2
// after a first run counted 10 of each: the counts go on from 10.
func wantResumed(t *testing.T, out string) {
	t.Helper()
	if got := lastCounts(out); len(got) != 3 || got["a0"] != "11" || !strings.Contains(out, "-U[a0, 10]") || strings.Contains(out, "+I[") {
		t.Fatalf("the job should resume from its last checkpoint: %v\n%s", got, out)
	}
}

// flushState makes Pebble write what the state directory's log holds into
// a table file (a job's state that grows does so by itself).
func flushState(t *testing.T, dir string) {
	t.Helper()
	db, err := pebble.Open(dir, &pebble.Options{Logger: quietPebble{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

type quietPebble struct{}

func (quietPebble) Infof(string, ...any)  {}
func (quietPebble) Errorf(string, ...any) {}
func (quietPebble) Fatalf(f string, a ...any) {
	panic("pebble: " + f)
}

// A table file of the state flipped on disk: the job fails, naming the
// file and saying to remove the directory or restore it (Pebble's
// Logger.Fatalf used to panic).
func TestStateDirCorruptTable(t *testing.T) {
	dir := t.TempDir()
	stateDir := filepath.Join(dir, "state")
	writeFile(t, dir, "in.jsonl", keyLines("a", 30, 3))
	if _, err := runSQL(t, nil, dir, countJob(stateDir, "")); err != nil {
		t.Fatal(err)
	}
	flushState(t, stateDir)
	ssts, _ := filepath.Glob(filepath.Join(stateDir, "*.sst"))
	if len(ssts) == 0 {
		t.Fatal("no table file to corrupt")
	}
	for _, f := range ssts {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i := 64; i < len(data)/2; i += 97 {
			data[i] ^= 0x5a
		}
		if err := os.WriteFile(f, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	appendFile(t, filepath.Join(dir, "in.jsonl"), keyLines("a", 3, 3))
	out, err := runSQL(t, nil, dir, countJob(stateDir, ""))
	wantFault(t, out, err, stateDir, ".sst is corrupt", "rm -r "+stateDir)
}

// The write-ahead log of the state is gone: Pebble opened the directory
// as an empty store, and the job counted from scratch and exited 0. Now
// it is refused, until told to start fresh.
func TestStateDirMissingLog(t *testing.T) {
	dir := t.TempDir()
	stateDir := filepath.Join(dir, "state")
	writeFile(t, dir, "in.jsonl", keyLines("a", 30, 3))
	if _, err := runSQL(t, nil, dir, countJob(stateDir, "")); err != nil {
		t.Fatal(err)
	}
	logs, _ := filepath.Glob(filepath.Join(stateDir, "*.log"))
	for _, l := range logs {
		os.Remove(l)
	}
	out, err := runSQL(t, nil, dir, countJob(stateDir, ""))
	wantFault(t, out, err, stateDir, "lost committed checkpoints", "write-ahead log", "state.start-fresh")
	// Refused every time, not only once.
	out, err = runSQL(t, nil, dir, countJob(stateDir, ""))
	wantFault(t, out, err, "lost committed checkpoints")

	out, err = runSQL(t, nil, dir, countJob(stateDir, "\nSET 'state.start-fresh' = 'true';"))
	if err != nil {
		t.Fatal(err)
	}
	if got := lastCounts(out); len(got) != 3 || got["a0"] != "10" {
		t.Fatalf("started afresh, the job should count all of its input: %v\n%s", got, out)
	}
	appendFile(t, filepath.Join(dir, "in.jsonl"), keyLines("a", 3, 3))
	out, err = runSQL(t, nil, dir, countJob(stateDir, ""))
	if err != nil {
		t.Fatal(err)
	}
	wantResumed(t, out)
}

// The disk under 'state.dir' fills up (a small tmpfs; skipped without the
// privilege to mount one): the job fails with "no space left on device"
// and no panic; with space freed, the job resumes from its last
// checkpoint. An engine whose store met the fault opens it again for its
// next job.
func TestStateDirFull(t *testing.T) {
	dir := t.TempDir()
	disk := filepath.Join(dir, "disk")
	if err := os.Mkdir(disk, 0o755); err != nil {
		t.Fatal(err)
	}
	mountTmpfs(t, disk, "24m")
	stateDir := filepath.Join(disk, "state")
	filler := filepath.Join(disk, "filler")
	writeFile(t, dir, "in.jsonl", keyLines("a", 30, 3))

	if _, err := runSQL(t, nil, dir, countJob(stateDir, "")); err != nil {
		t.Fatal(err)
	}
	fillDisk(t, filler)
	appendFile(t, filepath.Join(dir, "in.jsonl"), keyLines("a", 3, 3))
	out, err := runSQL(t, nil, dir, countJob(stateDir, ""))
	wantFault(t, out, err, stateDir, "no space left on device", "free space", "resumes from its last checkpoint")
	os.Remove(filler)
	out, err = runSQL(t, nil, dir, countJob(stateDir, ""))
	if err != nil {
		t.Fatal(err)
	}
	wantResumed(t, out)

	// One engine, three jobs: the second meets the full disk, the third
	// runs once space is freed.
	var buf bytes.Buffer
	e, err := sluice.Open(sluice.Options{Stdout: &buf})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ddl, insert, _ := strings.Cut(strings.ReplaceAll(countJob(stateDir, ""), "$DIR", dir), "INSERT")
	if err := e.Run(context.Background(), "ddl.sql", []byte(ddl)); err != nil {
		t.Fatal(err)
	}
	run := func() error {
		buf.Reset()
		return e.Run(context.Background(), "insert.sql", []byte("INSERT"+insert))
	}
	if err := run(); err != nil {
		t.Fatal(err)
	}
	fillDisk(t, filler)
	wantFault(t, buf.String(), run(), "no space left on device")
	os.Remove(filler)
	if err := run(); err != nil {
		t.Fatalf("the engine kept its failed store: %v", err)
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
