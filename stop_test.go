package sluice_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/internal/kafkatest"
)

// syncBuffer is a bytes.Buffer safe for a job's sink and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestStopKeepsOpenWindows stops a windowed job over an unbounded source
// with a durable state: the window still open is not emitted at the stop
// but kept, and the next run over the same state emits it whole.
func TestStopKeepsOpenWindows(t *testing.T) {
	bs := kafkatest.Start(t, 1, "ticks")
	dir := t.TempDir()
	produce := func(from, to int) { // one row a second
		var recs []*kgo.Record
		for i := from; i < to; i++ {
			ts := clusterBase.Add(time.Duration(i) * time.Second)
			recs = append(recs, &kgo.Record{Value: fmt.Appendf(nil, `{"ts":"%s"}`, ts.Format("2006-01-02 15:04:05"))})
		}
		kafkatest.Produce(t, bs, "ticks", recs...)
	}
	src := strings.ReplaceAll(`
SET 'state.dir' = '`+dir+`';
SET 'execution.checkpointing.interval' = '50ms';
SET 'parallelism.default' = '2';
CREATE TABLE ticks (ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH (
  'connector' = 'kafka', 'topic' = 'ticks', 'properties.bootstrap.servers' = '$BS',
  'scan.startup.mode' = 'earliest-offset', 'format' = 'json');
CREATE TABLE out (ws TIMESTAMP(3), n BIGINT) WITH ('connector' = 'print');
INSERT INTO out SELECT window_start, COUNT(*)
FROM TABLE(TUMBLE(TABLE ticks, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
GROUP BY window_start, window_end;`, "$BS", bs)
	run := func(wait string) string { return runUntilStop(t, src, wait) }
	produce(0, 150) // 00:00 and 00:01 complete, 00:02 open with 30 rows
	first := run("2026-01-01 00:01:00")
	if strings.Contains(first, "00:02:00") {
		t.Fatalf("the stop emitted the open window:\n%s", first)
	}
	produce(150, 200) // 20 more rows of 00:02, and 00:03 opens
	second := run("2026-01-01 00:02:00")
	if !strings.Contains(second, "+I[2026-01-01 00:02:00.000, 60]") {
		t.Fatalf("the open window was not kept whole across the stop:\nfirst run:\n%ssecond run:\n%s", first, second)
	}
}

// runUntilStop starts the job of src, waits until its printed output
// holds wait (and a few checkpoints more), stops it, and returns the
// output.
func runUntilStop(t *testing.T, src, wait string) string {
	t.Helper()
	var out syncBuffer
	e, err := sluice.Open(sluice.Options{Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	res, err := e.Exec(context.Background(), "job.sql", []byte(src))
	if err != nil {
		t.Fatal(sluice.FormatError(err, []byte(src)))
	}
	j := res[len(res)-1].Job
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), wait) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the output:\n%s", wait, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // checkpoints go on
	j.Stop()
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// OnDone calls back once the job has ended, with the error Wait returns:
// registered before the end, on the job's goroutine as it ends; after
// it, at once.
func TestJobOnDone(t *testing.T) {
	e, err := sluice.Open(sluice.Options{Stdout: &syncBuffer{}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	res, err := e.Exec(context.Background(), "t.sql", []byte(`
CREATE TABLE gen (v BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '10');
CREATE TABLE out (v BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT v FROM gen;`))
	if err != nil {
		t.Fatal(err)
	}
	j := res[len(res)-1].Job
	got := make(chan bool, 2)
	j.OnDone(func(err error) {
		select {
		case <-j.Done():
			got <- err == nil
		default:
			got <- false // called before the end
		}
	})
	select {
	case <-got:
		t.Fatal("OnDone called while the job runs")
	case <-time.After(50 * time.Millisecond):
	}
	j.Stop()
	if ok := <-got; !ok {
		t.Fatal("OnDone called before the job's end, or with an error")
	}
	called := false
	j.OnDone(func(error) { called = true })
	if !called {
		t.Error("OnDone after the end did not call back at once")
	}
}
