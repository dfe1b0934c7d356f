package lsm

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// commitCheckpoints commits checkpoints from..to-1 of job: each puts 50
// values of 1 KiB under keys k<c>-<i> into the store job/agg/0 and moves
// the position job/src/0 to c.
func commitCheckpoints(t *testing.T, b *Backend, job string, from, to int) {
	t.Helper()
	if err := tryCheckpoints(b, job, from, to, 50); err != nil {
		t.Fatal(err)
	}
}

func tryCheckpoints(b *Backend, job string, from, to, values int) error {
	s, err := b.Store(job + "/agg/0")
	if err != nil {
		return err
	}
	val := make([]byte, 1024)
	for c := from; c < to; c++ {
		for i := 0; i < values; i++ {
			for j := range val {
				val[j] = byte(c*131 + i*7 + j)
			}
			if err := s.Put(fmt.Appendf(nil, "k%d-%d", c, i), val); err != nil {
				return err
			}
		}
		if err := s.Checkpoint(); err != nil {
			return err
		}
		if err := b.Commit(job, map[string]int64{job + "/src/0": int64(c)}); err != nil {
			return err
		}
	}
	return nil
}

func mustOpen(t *testing.T, o Options, dir string) *Backend {
	t.Helper()
	b, err := o.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustClose(t *testing.T, b *Backend) {
	t.Helper()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
}

// wantPosition checks that job resumes after checkpoint c.
func wantPosition(t *testing.T, b *Backend, job string, c int64) {
	t.Helper()
	pos, err := b.Positions(job)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := pos[job+"/src/0"]; !ok || got != c || len(pos) != 1 {
		t.Fatalf("positions of %s = %v, want %s/src/0 = %d", job, pos, job, c)
	}
}

// wantError checks that err is not nil and contains every one of wants.
func wantError(t *testing.T, what string, err error, wants ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error", what)
	}
	t.Logf("%s: %v", what, err)
	for _, w := range wants {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: the error should say %q:\n%v", what, w, err)
		}
	}
}

func files(t *testing.T, dir, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(m)
	return m
}

// A corrupt table file (bytes flipped after a checkpoint was flushed to
// it) makes reads fail with an error that names the file and says what to
// do, without a panic (Pebble's default reaction is Logger.Fatalf), and
// the backend fails fast from then on.
func TestCorruptTable(t *testing.T) {
	dir := t.TempDir()
	b := mustOpen(t, Options{}, dir)
	commitCheckpoints(t, b, "job", 1, 4)
	if err := b.db.Flush(); err != nil {
		t.Fatal(err)
	}
	mustClose(t, b)
	ssts := files(t, dir, "*.sst")
	if len(ssts) == 0 {
		t.Fatal("the flush wrote no table")
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
	b, err := Open(dir)
	if err != nil {
		wantError(t, "open", err, dir, ".sst", "corrupt", "rm -r "+dir)
		return
	}
	defer mustClose(t, b)
	_, err = b.Positions("job")
	if err == nil {
		s, serr := b.Store("job/agg/0")
		if err = serr; err == nil {
			_, _, err = s.Get([]byte("k1-1"))
		}
	}
	wantError(t, "read", err, dir, ssts[0], "corrupt", "rm -r "+dir)
	// Failed fast: no more writes.
	wantError(t, "commit after the fault", b.Commit("job", nil), "corrupt")
}

// checkLoss runs the checks of a directory that lost checkpoints: every
// job is refused (with what happened and what to do) until started
// afresh, which lifts the refusal for that job only, durably.
func checkLoss(t *testing.T, dir string, wants ...string) {
	t.Helper()
	b := mustOpen(t, Options{}, dir)
	_, err := b.Positions("a")
	wantError(t, "positions of a", err, append(wants, dir, "state.start-fresh")...)
	mustClose(t, b)
	// Refused again, though nothing was committed in between.
	b = mustOpen(t, Options{}, dir)
	_, err = b.Positions("a")
	wantError(t, "positions of a, reopened", err, "state.start-fresh")
	_, err = b.Store("a/agg/0")
	wantError(t, "store of a", err, "state.start-fresh")
	// A job never seen here is refused too: its first checkpoints may
	// be among the lost ones.
	_, err = b.Store("c/agg/0")
	wantError(t, "store of c", err, "state.start-fresh")

	if err := b.Drop("a"); err != nil {
		t.Fatal(err)
	}
	commitCheckpoints(t, b, "a", 7, 8)
	wantPosition(t, b, "a", 7)
	_, err = b.Positions("b")
	wantError(t, "positions of b, after a started afresh", err, "state.start-fresh")
	mustClose(t, b)

	b = mustOpen(t, Options{}, dir)
	defer mustClose(t, b)
	wantPosition(t, b, "a", 7)
	_, err = b.Positions("b")
	wantError(t, "positions of b, reopened", err, "state.start-fresh")
}

// commitTwoJobs commits checkpoints 1..3 of jobs a and b into a new
// directory, and returns the directory.
func commitTwoJobs(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	b := mustOpen(t, Options{}, dir)
	commitCheckpoints(t, b, "a", 1, 4)
	commitCheckpoints(t, b, "b", 1, 4)
	mustClose(t, b)
	if len(files(t, dir, "*.sst")) != 0 {
		t.Fatal("the checkpoints were flushed: the test wants them in the log only")
	}
	return dir
}

// A state directory whose write-ahead log is gone opened, in Pebble, as an
// empty store: the job started over and exited 0. The checkpoint marker
// shows the loss, and the jobs are refused until started afresh.
func TestMissingLog(t *testing.T) {
	dir := commitTwoJobs(t)
	logs := files(t, dir, "*.log")
	if len(logs) == 0 {
		t.Fatal("no log")
	}
	for _, l := range logs {
		if err := os.Remove(l); err != nil {
			t.Fatal(err)
		}
	}
	checkLoss(t, dir, "lost committed checkpoints", "checkpoint 6 was committed", "holds only checkpoint 0", "write-ahead log")
}

// A log cut short loses its last checkpoints in Pebble as silently.
func TestTruncatedLog(t *testing.T) {
	dir := commitTwoJobs(t)
	var last string
	for _, l := range files(t, dir, "*.log") {
		if fi, err := os.Stat(l); err == nil && fi.Size() > 0 {
			last = l
		}
	}
	if last == "" {
		t.Fatal("no log with data")
	}
	fi, _ := os.Stat(last)
	if err := os.Truncate(last, fi.Size()/2); err != nil {
		t.Fatal(err)
	}
	checkLoss(t, dir, "lost committed checkpoints", "checkpoint 6 was committed", "write-ahead log")
}

// Without its marker a store that has checkpoints cannot be checked: it
// is refused the same way.
func TestMissingMarker(t *testing.T) {
	dir := commitTwoJobs(t)
	if err := os.Remove(filepath.Join(dir, MarkerFile)); err != nil {
		t.Fatal(err)
	}
	checkLoss(t, dir, MarkerFile, "missing")
}

// A crash between Pebble's sync and the marker's write leaves the marker
// one checkpoint behind the store: that is no loss.
func TestMarkerBehind(t *testing.T) {
	dir := commitTwoJobs(t)
	m, err := openMarker(vfs.Default, filepath.Join(dir, MarkerFile))
	if err != nil {
		t.Fatal(err)
	}
	// Checkpoint 6 is in slot 0; make slot 0 a torn write: slot 1 holds 5.
	if _, err := m.f.WriteAt([]byte("torn"), 0); err != nil {
		t.Fatal(err)
	}
	m.close()
	if seq, ok, err := readMarker(vfs.Default, filepath.Join(dir, MarkerFile)); err != nil || !ok || seq != 5 {
		t.Fatalf("marker = %d %v %v, want 5", seq, ok, err)
	}
	b := mustOpen(t, Options{}, dir)
	defer mustClose(t, b)
	wantPosition(t, b, "a", 3)
	wantPosition(t, b, "b", 3)
	commitCheckpoints(t, b, "a", 4, 5)
}

// A state directory made by a version without markers opens as it is,
// and gets a marker.
func TestNoMarkerYet(t *testing.T) {
	dir := t.TempDir()
	b := mustOpen(t, Options{}, dir)
	s, _ := b.Store("a/agg/0")
	s.Put([]byte("k"), []byte("v"))
	// What an older version committed: no checkpoint number.
	b.mu.Lock()
	b.pending.Set(positionKey("a/src/0"), []byte{4}, nil)
	err := b.pending.Commit(nil)
	b.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	mustClose(t, b)
	os.Remove(filepath.Join(dir, MarkerFile))
	b = mustOpen(t, Options{}, dir)
	defer mustClose(t, b)
	wantPosition(t, b, "a", 2)
	if _, err := os.Stat(filepath.Join(dir, MarkerFile)); err != nil {
		t.Fatal(err)
	}
}

// fullFS is the real filesystem, on which writes (of files whose names
// match, all if match is nil) fail with ENOSPC while full is set, as on a
// full disk (or with errno, if set). With frees, removing a file (the
// reserve) frees the disk.
type fullFS struct {
	vfs.FS
	full  atomic.Bool
	frees bool
	match func(name string) bool
	errno syscall.Errno
}

func newFullFS() *fullFS { return &fullFS{FS: vfs.Default, errno: syscall.ENOSPC} }

func (fs *fullFS) wrap(name string, f vfs.File, err error) (vfs.File, error) {
	if err != nil || (fs.match != nil && !fs.match(name)) {
		return f, err
	}
	return &fullFile{File: f, fs: fs, name: name}, nil
}

func (fs *fullFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, c)
	return fs.wrap(name, f, err)
}

func (fs *fullFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, o ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.OpenReadWrite(name, c, o...)
	return fs.wrap(name, f, err)
}

func (fs *fullFS) ReuseForWrite(old, name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(old, name, c)
	return fs.wrap(name, f, err)
}

func (fs *fullFS) Remove(name string) error {
	if fs.frees {
		fs.full.Store(false)
	}
	return fs.FS.Remove(name)
}

func (fs *fullFS) Unwrap() vfs.FS { return fs.FS }

type fullFile struct {
	vfs.File
	fs   *fullFS
	name string
}

func (f *fullFile) enospc() error {
	return &os.PathError{Op: "write", Path: f.name, Err: f.fs.errno}
}

func (f *fullFile) Write(p []byte) (int, error) {
	if f.fs.full.Load() {
		return 0, f.enospc()
	}
	return f.File.Write(p)
}

func (f *fullFile) WriteAt(p []byte, off int64) (int, error) {
	if f.fs.full.Load() {
		return 0, f.enospc()
	}
	return f.File.WriteAt(p, off)
}

func (f *fullFile) Preallocate(off, n int64) error {
	if f.fs.full.Load() {
		return f.enospc()
	}
	return f.File.Preallocate(off, n)
}

// checkResumes reopens dir on the real filesystem (space freed) and checks
// that job resumes after one of the checkpoints in want, with the state
// of that checkpoint, and goes on.
func checkResumes(t *testing.T, dir, job string, want ...int64) {
	t.Helper()
	b := mustOpen(t, Options{}, dir)
	defer mustClose(t, b)
	pos, err := b.Positions(job)
	if err != nil {
		t.Fatal(err)
	}
	c := pos[job+"/src/0"]
	ok := false
	for _, w := range want {
		ok = ok || c == w
	}
	if !ok {
		t.Fatalf("%s resumes after checkpoint %d, want one of %v", job, c, want)
	}
	s, err := b.Store(job + "/agg/0")
	if err != nil {
		t.Fatal(err)
	}
	if _, found, err := s.Get(fmt.Appendf(nil, "k%d-49", c)); err != nil || !found {
		t.Fatalf("the state of checkpoint %d is missing: %v %v", c, found, err)
	}
	if _, found, _ := s.Get(fmt.Appendf(nil, "k%d-0", c+1)); found {
		t.Fatalf("the state holds writes after checkpoint %d", c)
	}
	commitCheckpoints(t, b, job, int(c)+1, int(c)+2)
	if _, err := os.Stat(filepath.Join(dir, ReserveFile)); err != nil {
		t.Fatalf("the reserve was not set aside again: %v", err)
	}
}

// The disk fills up under a commit: Pebble's log write fails. The reserve
// is freed, the write completes, and the commit fails with a clear error;
// then every call does. Reopened, the job resumes from a checkpoint that
// is complete.
func TestDiskFullCommit(t *testing.T) {
	dir := t.TempDir()
	fs := newFullFS()
	fs.frees = true
	b := mustOpen(t, Options{FS: fs}, dir)
	commitCheckpoints(t, b, "job", 1, 3)
	fs.full.Store(true)
	err := tryCheckpoints(b, "job", 3, 4, 50)
	wantError(t, "commit on a full disk", err, dir, "no space left on device", "free space", "last checkpoint")
	_, err = b.Positions("job")
	wantError(t, "positions after the fault", err, "no space left on device")
	mustClose(t, b)
	checkResumes(t, dir, "job", 2, 3)
}

// Without a reserve to free, the log write fails in Pebble, which ends in
// Logger.Fatalf (that used to panic), and Pebble reports the commit as a
// success: the backend must not.
func TestDiskFullNoReserve(t *testing.T) {
	dir := t.TempDir()
	fs := newFullFS()
	b := mustOpen(t, Options{FS: fs, Reserve: -1}, dir)
	commitCheckpoints(t, b, "job", 1, 3)
	fs.full.Store(true)
	err := tryCheckpoints(b, "job", 3, 4, 50)
	wantError(t, "commit on a full disk", err, dir, "no space left on device", ".log", "free space")
	wantError(t, "commit after the fault", b.Commit("job", nil), "no space left on device")
	b.Close()
	checkResumes(t, dir, "job", 2)
}

// A write that fails otherwise (a disk error) fails the commit with the
// system's error, naming the file.
func TestWriteError(t *testing.T) {
	dir := t.TempDir()
	fs := newFullFS()
	fs.errno = syscall.EIO
	b := mustOpen(t, Options{FS: fs}, dir)
	commitCheckpoints(t, b, "job", 1, 3)
	fs.full.Store(true)
	err := tryCheckpoints(b, "job", 3, 4, 50)
	wantError(t, "commit on a failing disk", err, dir, ".log", "input/output error", "check the disk")
	wantError(t, "commit after the fault", b.Commit("job", nil), "input/output error")
	fs.full.Store(false)
	b.Close()
	checkResumes(t, dir, "job", 2)
}

// A flush that fails for want of space (in Pebble's background) fails the
// next call.
func TestDiskFullFlush(t *testing.T) {
	dir := t.TempDir()
	fs := newFullFS()
	fs.match = func(name string) bool { return strings.HasSuffix(name, ".sst") }
	b := mustOpen(t, Options{FS: fs}, dir)
	commitCheckpoints(t, b, "job", 1, 3)
	fs.full.Store(true)
	if _, err := b.db.AsyncFlush(); err != nil {
		t.Fatal(err)
	}
	// The flush runs on Pebble's goroutine; a guard, not a measure.
	deadline := time.Now().Add(time.Minute)
	for b.Err() == nil {
		if time.Now().After(deadline) {
			t.Fatal("the failed flush was not reported")
		}
		time.Sleep(time.Millisecond)
	}
	err := tryCheckpoints(b, "job", 3, 4, 1)
	wantError(t, "commit after a failed flush", err, dir, "no space left on device", "free space")
	mustClose(t, b) // on the still full disk
	checkResumes(t, dir, "job", 2)
}

// A checkpoint larger than half of Pebble's memtable is written as a
// batch of its own, and a failed write of it ends in a panic of Pebble's
// with its locks held (the process dies: "unlock of unlocked mutex"); the
// reserve keeps it from failing.
func TestDiskFullLargeCheckpoint(t *testing.T) {
	dir := t.TempDir()
	fs := newFullFS()
	fs.frees = true
	b := mustOpen(t, Options{FS: fs}, dir)
	commitCheckpoints(t, b, "job", 1, 3)
	fs.full.Store(true)
	err := tryCheckpoints(b, "job", 3, 4, 3000)
	wantError(t, "a large checkpoint on a full disk", err, dir, "no space left on device", "free space")
	mustClose(t, b)
	checkResumes(t, dir, "job", 2, 3)
}

// A checkpoint that would leave the disk (nearly) full is refused before
// anything is written; and Open refuses a disk without room for the
// reserve. On a real full disk: a small tmpfs (needs the privilege to
// mount one; skipped without).
func TestDiskFullTmpfs(t *testing.T) {
	dir := t.TempDir()
	mountTmpfs(t, dir, "24m")
	state := filepath.Join(dir, "state")
	b := mustOpen(t, Options{}, state)
	commitCheckpoints(t, b, "job", 1, 3)
	// Another writer fills the disk.
	filler := filepath.Join(dir, "filler")
	fill(t, filler)
	last := int64(2)
	var err error
	for c := 3; err == nil && c < 1000; c++ {
		if err = tryCheckpoints(b, "job", c, c+1, 100); err == nil {
			last = int64(c)
		}
	}
	wantError(t, "commits on a full disk", err, state, "no space left on device", "free space")
	b.Close()

	// Still full: the directory opens no more (no room for the reserve,
	// or for Pebble's new log), or its first checkpoint is refused.
	if b, err = Open(state); err == nil {
		err = tryCheckpoints(b, "job", int(last)+1, int(last)+2, 100)
		b.Close()
	}
	wantError(t, "open on a full disk", err, state, "no space left on device")
	os.Remove(filler)
	checkResumes(t, state, "job", last, last+1)
}

// fill writes path until the disk is full.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if !strings.Contains(err.Error(), "no space") {
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
