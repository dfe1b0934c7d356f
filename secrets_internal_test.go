package sluice

import (
	"context"
	"slices"
	"testing"
)

// The secrets masked in log lines follow the tables declared: a table
// added after a line was logged has its secrets masked in the next, and a
// dropped table's are no longer looked for.
func TestSecretsFollowTables(t *testing.T) {
	e, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	exec := func(sql string) {
		t.Helper()
		if _, err := e.Exec(context.Background(), "t.sql", []byte(sql)); err != nil {
			t.Fatal(err)
		}
	}
	exec(`CREATE TABLE a (x INT) WITH ('connector' = 'blackhole', 'password' = 'first-secret')`)
	if got := e.secrets(); !slices.Equal(got, []string{"first-secret"}) {
		t.Fatalf("secrets = %q, want [first-secret]", got)
	}
	exec(`CREATE TABLE b (x INT) WITH ('connector' = 'blackhole', 'password' = 'second-secret')`)
	if got := e.secrets(); !slices.Equal(got, []string{"first-secret", "second-secret"}) {
		t.Fatalf("secrets = %q, want [first-secret second-secret]", got)
	}
	exec(`DROP TABLE a`)
	if got := e.secrets(); !slices.Equal(got, []string{"second-secret"}) {
		t.Fatalf("secrets = %q, want [second-secret]", got)
	}
}

// A session's secrets are those of its tables and of the engine's, and
// follow both.
func TestSessionSecretsFollowTables(t *testing.T) {
	e, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s := e.NewSession()
	exec := func(on *Engine, sql string) {
		t.Helper()
		if _, err := on.Exec(context.Background(), "t.sql", []byte(sql)); err != nil {
			t.Fatal(err)
		}
	}
	exec(s, `CREATE TABLE own (x INT) WITH ('connector' = 'blackhole', 'password' = 'session-secret')`)
	if got := s.secrets(); !slices.Equal(got, []string{"session-secret"}) {
		t.Fatalf("secrets = %q, want [session-secret]", got)
	}
	exec(e, `CREATE TABLE shared (x INT) WITH ('connector' = 'blackhole', 'password' = 'engine-secret')`)
	if got := s.secrets(); !slices.Equal(got, []string{"session-secret", "engine-secret"}) && !slices.Equal(got, []string{"engine-secret", "session-secret"}) {
		t.Fatalf("secrets = %q, want both", got)
	}
	if got := e.secrets(); !slices.Equal(got, []string{"engine-secret"}) {
		t.Fatalf("engine's secrets = %q, want [engine-secret]", got)
	}
}
