package sluice_test

import (
	"context"
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
