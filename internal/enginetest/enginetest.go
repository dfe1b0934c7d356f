// Package enginetest runs SQL scripts on a sluice engine for the tests of
// connectors: an engine whose printed rows and log a test reads while its
// jobs run, and waits for those jobs to stop or fail.
//
// It imports the root package, which imports every built-in connector:
// only external test packages (package mqtt_test, not package mqtt) can
// use it.
package enginetest

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicesql/sluice"
)

// The waits give up after these. A test that passes waits only as long
// as its jobs take; the bounds are for a test that fails, and for slow
// machines under the race detector.
const (
	outputTimeout = 15 * time.Second // WaitLines, WaitContains
	jobTimeout    = 30 * time.Second // Stop, Wait, WaitErr
	pollInterval  = 5 * time.Millisecond
)

// Output is an io.Writer that an engine writes to while a test reads it.
type Output struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write implements io.Writer.
func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.Write(p)
}

// String returns everything written so far.
func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}

// Lines returns the lines written so far that start with prefix ("+I"
// for the rows a print table inserted).
func (o *Output) Lines(prefix string) []string {
	var out []string
	for _, l := range strings.Split(o.String(), "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}

// WaitLines waits for n lines starting with prefix and returns the lines
// with that prefix. It gives up after 15 s and returns those there are
// (fewer than n): the caller's assertions say what is missing.
func (o *Output) WaitLines(t testing.TB, prefix string, n int) []string {
	t.Helper()
	deadline := time.Now().Add(outputTimeout)
	for {
		l := o.Lines(prefix)
		if len(l) >= n || time.Now().After(deadline) {
			return l
		}
		time.Sleep(pollInterval)
	}
}

// WaitContains waits for s to be written; the test fails if it is not
// within 15 s.
func (o *Output) WaitContains(t testing.TB, s string) {
	t.Helper()
	deadline := time.Now().Add(outputTimeout)
	for !strings.Contains(o.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s in:\n%s", s, o)
		}
		time.Sleep(pollInterval)
	}
}

// Engine is a sluice engine whose print tables write to Out and whose log
// goes to Log.
type Engine struct {
	*sluice.Engine
	Out, Log *Output
}

// Open opens an engine, closed when the test ends.
func Open(t testing.TB) *Engine {
	t.Helper()
	out, log := &Output{}, &Output{}
	e, err := sluice.Open(sluice.Options{Stdout: out, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return &Engine{e, out, log}
}

// Start executes src, with each old string of the pairs repl (as for
// strings.NewReplacer) replaced by the new, and returns the job its last
// job-starting statement started. The test fails if src does not execute
// or starts no job.
func (e *Engine) Start(t testing.TB, src string, repl ...string) *sluice.Job {
	t.Helper()
	src = strings.NewReplacer(repl...).Replace(src)
	res, err := e.Exec(context.Background(), "test.sql", []byte(src))
	if err != nil {
		t.Fatal(sluice.FormatError(err, []byte(src)))
	}
	for i := len(res) - 1; i >= 0; i-- {
		if res[i].Job != nil {
			return res[i].Job
		}
	}
	t.Fatal("no job started")
	return nil
}

// ExecErr executes src with the replacements repl, as Start does, and
// returns its error: for scripts that should be refused.
func (e *Engine) ExecErr(src string, repl ...string) error {
	src = strings.NewReplacer(repl...).Replace(src)
	_, err := e.Exec(context.Background(), "test.sql", []byte(src))
	return err
}

// Stop stops j and waits for it to end; the test fails if it ends with
// an error or does not end within 30 s.
func Stop(t testing.TB, j *sluice.Job) {
	t.Helper()
	j.Stop()
	Wait(t, j)
}

// Wait waits for j to end; the test fails if it ends with an error or
// does not end within 30 s (it is cancelled then).
func Wait(t testing.TB, j *sluice.Job) {
	t.Helper()
	select {
	case <-j.Done():
	case <-time.After(jobTimeout):
		j.Cancel()
		t.Fatal("the job did not end")
	}
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
}

// WaitErr waits for j to end and returns its error (nil if it ended
// well); the test fails if it does not end within 30 s (it is cancelled
// then).
func WaitErr(t testing.TB, j *sluice.Job) error {
	t.Helper()
	select {
	case <-j.Done():
	case <-time.After(jobTimeout):
		j.Cancel()
		t.Fatal("the job did not fail")
	}
	return j.Wait()
}
