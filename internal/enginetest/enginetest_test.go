package enginetest_test

import (
	"strings"
	"testing"

	"github.com/sluicesql/sluice/internal/enginetest"
)

// TestBoundedJob runs a job that ends by itself: Start makes the
// replacements, Wait sees it end well, Lines keeps the rows' order.
func TestBoundedJob(t *testing.T) {
	e := enginetest.Open(t)
	j := e.Start(t, `
CREATE TABLE g (n INT) WITH ('connector' = 'datagen', 'fields.n.kind' = 'sequence', 'fields.n.start' = '1', 'fields.n.end' = '$END');
CREATE TABLE out (n INT) WITH ('connector' = 'print');
INSERT INTO out SELECT n FROM g;`, "$END", "3")
	enginetest.Wait(t, j)
	if got := strings.Join(e.Out.Lines("+I"), " "); got != "+I[1] +I[2] +I[3]" {
		t.Errorf("got %s", got)
	}
	if got := e.Out.WaitLines(t, "+I[2", 1); len(got) != 1 {
		t.Errorf("lines starting with +I[2: %q", got)
	}
	if err := enginetest.WaitErr(t, j); err != nil {
		t.Errorf("a job that ended well: %v", err)
	}
}

// TestStopUnbounded stops a job that would run for ever, once it has
// printed some rows.
func TestStopUnbounded(t *testing.T) {
	e := enginetest.Open(t)
	j := e.Start(t, `
CREATE TABLE g (n INT) WITH ('connector' = 'datagen', 'rows-per-second' = '1000');
CREATE TABLE out (n INT) WITH ('connector' = 'print');
INSERT INTO out SELECT n FROM g;`)
	if got := e.Out.WaitLines(t, "+I", 3); len(got) < 3 {
		t.Fatalf("%d rows", len(got))
	}
	e.Out.WaitContains(t, "+I[")
	enginetest.Stop(t, j)
	select {
	case <-j.Done():
	default:
		t.Error("Stop returned before the job ended")
	}
}

// TestExecErr returns the error of a script the engine refuses.
func TestExecErr(t *testing.T) {
	e := enginetest.Open(t)
	err := e.ExecErr(`CREATE TABLE t (n INT) WITH ('connector' = '$C');`, "$C", "no-such-connector")
	if err == nil || !strings.Contains(err.Error(), "no-such-connector") {
		t.Errorf("got %v", err)
	}
}
