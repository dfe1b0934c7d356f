package sluice_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/internal/kafkatest"
)

// Sessions of one engine: each declares tables and SETs options of its
// own, sees the engine's tables unless it hides them, and stops only its
// own jobs when closed; jobs of separate sessions that declare the same
// table read it through one shared reader per partition.
func TestSessions(t *testing.T) {
	bs := kafkatest.Start(t, 2, "in")
	se := openShared(t, sluice.Options{}, map[string]string{"$BS": bs})
	se.exec(`CREATE TABLE a (id BIGINT, s STRING) WITH ('connector' = 'print', 'print-identifier' = 'a');
SET 'parallelism.default' = '1';`)
	src := strings.ReplaceAll(`CREATE TABLE src (id BIGINT, s STRING) WITH ('connector' = 'kafka', 'topic' = 'in',
  'properties.bootstrap.servers' = '$BS', 'scan.startup.mode' = 'earliest-offset', 'format' = 'json');`, "$BS", bs)
	s1, s2 := se.NewSession(), se.NewSession()
	exec := func(s *sluice.Engine, sql string) *sluice.Job {
		t.Helper()
		res, err := s.Exec(context.Background(), "session.sql", []byte(sql))
		if err != nil {
			t.Fatal(sluice.FormatError(err, []byte(sql)))
		}
		return res[len(res)-1].Job
	}
	// The same name in two sessions: no conflict; the engine's table a is
	// seen from both; s2 hides it with a table of its own.
	exec(s1, src)
	exec(s2, src+`
CREATE TABLE a (id BIGINT, s STRING) WITH ('connector' = 'print', 'print-identifier' = 'a2');
SET 'pipeline.name' = 'second';`)
	if _, err := se.Exec(context.Background(), "root.sql", []byte("INSERT INTO a SELECT id, s FROM src;")); err == nil || !strings.Contains(err.Error(), "unknown table 'src'") {
		t.Fatalf("the engine sees a session's table: %v", err)
	}
	if got := s1.Config()["pipeline.name"]; got != "" {
		t.Fatalf("s2's SET reached s1: pipeline.name = %q", got)
	}
	if got := s1.Config()["parallelism.default"]; got != "1" {
		t.Fatalf("a session does not start from the engine's options: %q", got)
	}
	j1 := exec(s1, `INSERT INTO a SELECT id, s FROM src;`)
	j2 := exec(s2, `INSERT INTO a SELECT id, UPPER(s) FROM src;`)
	if j2.Name != "second" {
		t.Fatalf("job of s2 named %q, want second", j2.Name)
	}
	se.waitShared(4, j1.Name, j2.Name)
	produceIDs(t, bs, "in", 0, 40)
	if got := se.waitPrinted("a", 40); !slices.Equal(got, ids(0, 40)) {
		t.Errorf("a printed %v", got)
	}
	if got := se.waitPrinted("a2", 40); !slices.Equal(got, ids(0, 40)) {
		t.Errorf("a2 printed %v", got)
	}
	if jobs := s1.Jobs(); len(jobs) != 1 || jobs[0] != j1 {
		t.Fatalf("s1's jobs: %v", jobs)
	}
	if jobs := se.Jobs(); len(jobs) != 2 {
		t.Fatalf("the engine's jobs: %v", jobs)
	}
	// Closing s2 stops its job only.
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-j2.Done():
	default:
		t.Fatal("closing s2 left its job running")
	}
	se.waitShared(2, j1.Name)
	produceIDs(t, bs, "in", 40, 50)
	if got := se.waitPrinted("a", 50); !slices.Equal(got, ids(0, 50)) {
		t.Errorf("a printed %v after s2 closed", got)
	}
	select {
	case <-j1.Done():
		t.Fatalf("closing s2 stopped s1's job: %v", j1.Wait())
	default:
	}
	if jobs := se.Jobs(); len(jobs) != 1 {
		t.Fatalf("the engine still holds %d jobs, want 1 (an ended job is forgotten)", len(jobs))
	}
}

// A job run again in a new session of the engine, once the first run
// ended, gets its name back and so resumes from its state; while a job
// of the name runs, another gets "-2". DropState discards the state
// saved under a name (refused while a job of the name runs), so that
// the next run starts from scratch.
func TestSessionJobNamesAndDropState(t *testing.T) {
	dir := t.TempDir()
	var lines strings.Builder
	for i := 0; i < 5; i++ {
		fmt.Fprintf(&lines, "{\"id\":%d}\n", i)
	}
	writeFile(t, dir, "in.jsonl", lines.String())
	e, err := sluice.Open(sluice.Options{Stdout: io.Discard, Config: map[string]string{
		"state.dir": filepath.Join(dir, "state"), "pipeline.name": "p"}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ddl := strings.ReplaceAll(`CREATE TABLE src (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '$DIR/in.jsonl', 'format' = 'json');
CREATE TABLE out (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '$DIR/out/', 'format' = 'json');
CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '10');
CREATE TABLE hole (id BIGINT) WITH ('connector' = 'blackhole');
`, "$DIR", dir)
	start := func(s *sluice.Engine, insert string) *sluice.Job {
		t.Helper()
		res, err := s.Exec(context.Background(), "job.sql", []byte(ddl+insert))
		if err != nil {
			t.Fatal(err)
		}
		return res[len(res)-1].Job
	}
	written := func() int {
		t.Helper()
		n := 0
		files, _ := filepath.Glob(filepath.Join(dir, "out", "part-*"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			n += strings.Count(string(b), "\n")
		}
		return n
	}
	run := func() {
		t.Helper()
		s := e.NewSession()
		j := start(s, "INSERT INTO out SELECT id FROM src;")
		if j.Name != "p" {
			t.Fatalf("job named %q, want p", j.Name)
		}
		if err := j.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	run()
	if n := written(); n != 5 {
		t.Fatalf("first run wrote %d rows, want 5", n)
	}
	run() // resumes after the 5 rows: nothing new
	if n := written(); n != 5 {
		t.Fatalf("the second run read the input again: %d rows in all, want 5", n)
	}

	// While p runs, another session's job of the name is p-2, and p's
	// state cannot be dropped.
	s1, s2 := e.NewSession(), e.NewSession()
	live := start(s1, "SET 'pipeline.name' = 'live'; INSERT INTO hole SELECT id FROM gen;")
	if other := start(s2, "SET 'pipeline.name' = 'live'; INSERT INTO hole SELECT id FROM gen;"); other.Name != "live-2" {
		t.Fatalf("second running job named %q, want live-2", other.Name)
	}
	if err := e.DropState(context.Background(), "live"); err == nil || !strings.Contains(err.Error(), "running") {
		t.Fatalf("DropState of a running job: %v", err)
	}
	s1.Close()
	s2.Close()
	if live.Name != "live" {
		t.Fatalf("job named %q, want live", live.Name)
	}

	if err := e.DropState(context.Background(), "p"); err != nil {
		t.Fatal(err)
	}
	run() // from scratch: the 5 rows again
	if n := written(); n != 10 {
		t.Fatalf("after DropState the run wrote %d rows in all, want 10", n)
	}
}
