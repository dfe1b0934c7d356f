//go:build linux

package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// exitBound bounds how long a signalled process may take to exit. It is a
// guard against a process that does not stop, not a measure of speed.
const exitBound = 10 * time.Second

// process is a sluice process under test.
type process struct {
	cmd    *exec.Cmd
	stderr *lockedBuffer
	done   chan struct{}
	err    error
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// start runs the binary with args in dir; its standard output goes to
// stdout (nil: discarded).
func start(t *testing.T, dir string, stdout io.Writer, args ...string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(e2eBinary(t), args...), stderr: &lockedBuffer{}, done: make(chan struct{})}
	p.cmd.Dir = dir
	p.cmd.Stdout = stdout
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

func (p *process) signal(t *testing.T, sig os.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("cannot send %v: %v", sig, err)
	}
}

// exitCode waits for the process to exit (at most exitBound) and returns
// its exit code.
func (p *process) exitCode(t *testing.T) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(exitBound):
		p.cmd.Process.Kill()
		<-p.done
		t.Fatalf("the process did not exit within %v of the signal\nstderr:\n%s", exitBound, p.stderr.String())
	}
	var exitErr *exec.ExitError
	switch {
	case p.err == nil:
		return 0
	case errors.As(p.err, &exitErr):
		return exitErr.ExitCode()
	}
	t.Fatalf("cannot run sluice: %v", p.err)
	return -1
}

// waitFor waits until stderr holds s (at most exitBound).
func (p *process) waitFor(t *testing.T, s string) {
	t.Helper()
	deadline := time.After(exitBound)
	for !strings.Contains(p.stderr.String(), s) {
		select {
		case <-p.done:
			t.Fatalf("the process exited before saying %q\nstderr:\n%s", s, p.stderr.String())
		case <-deadline:
			t.Fatalf("the process did not say %q within %v\nstderr:\n%s", s, exitBound, p.stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func writeJob(t *testing.T, dir, sql string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "job.sql"), []byte(sql), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A running job stops on SIGTERM: sources stop reading, sinks flush, and
// the process exits 0.
func TestSIGTERMStopsRunningJob(t *testing.T) {
	dir := t.TempDir()
	writeJob(t, dir, `
CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '100', 'fields.id.kind' = 'sequence',
  'fields.id.start' = '1', 'fields.id.end' = '1000000000');
SELECT id FROM gen;`)
	pr, pw := io.Pipe()
	p := start(t, dir, pw, "run", "job.sql")
	sc := bufio.NewScanner(pr)
	for range 3 { // the header and two rows: the job runs
		if !sc.Scan() {
			t.Fatalf("no output\nstderr:\n%s", p.stderr.String())
		}
	}
	go io.Copy(io.Discard, pr)
	p.signal(t, syscall.SIGTERM)
	if code := p.exitCode(t); code != 0 {
		t.Fatalf("exit code %d, want 0\nstderr:\n%s", code, p.stderr.String())
	}
	pw.Close()
}

// A job loading a dimension table from a service that does not answer
// stops on SIGTERM: the load is cancelled (nothing was read yet), without
// waiting for the load's timeout.
func TestSIGTERMStopsLoadingDimension(t *testing.T) {
	asked := make(chan struct{}, 1)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case asked <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	dir := t.TempDir()
	writeJob(t, dir, fmt.Sprintf(`
CREATE TABLE clicks (uid BIGINT, pt AS PROCTIME()) WITH ('connector' = 'datagen', 'rows-per-second' = '10');
CREATE TABLE users (uid BIGINT, name STRING) WITH ('connector' = 'http', 'url' = '%s/users', 'timeout' = '1 h');
SELECT c.uid, u.name FROM clicks AS c JOIN users FOR SYSTEM_TIME AS OF c.pt AS u ON c.uid = u.uid;`, srv.URL))
	// The stop timeout is long: the process must stop by itself, not be
	// cut short.
	p := start(t, dir, nil, "run", "--stop-timeout", "1h", "job.sql")
	select {
	case <-asked:
	case <-p.done:
		t.Fatalf("the process exited before loading the table\nstderr:\n%s", p.stderr.String())
	}
	p.signal(t, syscall.SIGTERM)
	if code := p.exitCode(t); code != 0 {
		t.Fatalf("exit code %d, want 0\nstderr:\n%s", code, p.stderr.String())
	}
}

// stuckJob starts a job whose sink is blocked writing to its standard
// output, a pipe that nobody reads, so that a graceful stop cannot
// finish: the rows in flight (batches of hundreds of rows, produced as
// fast as they go) cannot be written. It returns once the pipe is full.
func stuckJob(t *testing.T, args ...string) *process {
	t.Helper()
	dir := t.TempDir()
	writeJob(t, dir, `
CREATE TABLE gen (id BIGINT, s STRING) WITH ('connector' = 'datagen', 'rows-per-second' = '1e12');
SELECT * FROM gen;`)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p := start(t, dir, w, append(append([]string{"run"}, args...), "job.sql")...)
	w.Close()
	t.Cleanup(func() { r.Close() }) // after the process is gone (cleanups run last first)
	size, _, errno := syscall.Syscall(syscall.SYS_FCNTL, r.Fd(), syscall.F_GETPIPE_SZ, 0)
	if errno != 0 {
		t.Fatalf("cannot read the size of the pipe: %v", errno)
	}
	deadline := time.After(time.Minute)
	for {
		var unread int32
		if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, r.Fd(), syscall.TIOCINQ, uintptr(unsafe.Pointer(&unread))); errno != 0 {
			t.Fatalf("cannot read what the pipe holds: %v", errno)
		}
		// Writes do not always share the pipe's pages: it is full (the
		// next write blocks) a little short of its size.
		if uintptr(unread)+8192 >= size {
			return p
		}
		select {
		case <-p.done:
			t.Fatalf("the process exited before filling its output\nstderr:\n%s", p.stderr.String())
		case <-deadline:
			t.Fatalf("the process did not fill its output within a minute\nstderr:\n%s", p.stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// A job that cannot stop gracefully is cut short once the stop timeout
// has passed: the process exits as a process killed by the signal would,
// and says why.
func TestSIGTERMStopTimeout(t *testing.T) {
	p := stuckJob(t, "--stop-timeout", "500ms")
	p.signal(t, syscall.SIGTERM)
	if code := p.exitCode(t); code != 128+int(syscall.SIGTERM) {
		t.Fatalf("exit code %d, want %d\nstderr:\n%s", code, 128+int(syscall.SIGTERM), p.stderr.String())
	}
	if !strings.Contains(p.stderr.String(), "did not stop within 500ms of SIGTERM") {
		t.Fatalf("stderr does not say why it exited:\n%s", p.stderr.String())
	}
}

// A second signal exits at once, whatever the stop timeout.
func TestSecondSignalExitsAtOnce(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			p := stuckJob(t, "--stop-timeout", "1h")
			p.signal(t, sig)
			p.waitFor(t, "stopping")
			p.signal(t, sig)
			if code := p.exitCode(t); code != 128+int(sig) {
				t.Fatalf("exit code %d, want %d\nstderr:\n%s", code, 128+int(sig), p.stderr.String())
			}
		})
	}
}
