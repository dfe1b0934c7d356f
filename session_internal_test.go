package sluice

import (
	"context"
	"strings"
	"testing"
)

// A session's log masks the secrets of its own tables' options, as the
// engine's does of the engine's tables.
func TestSessionLogMasksItsSecrets(t *testing.T) {
	var log strings.Builder
	e, err := Open(Options{Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s := e.NewSession()
	defer s.Close()
	if _, err := s.Exec(context.Background(), "s.sql", []byte(`CREATE TABLE t (id BIGINT) WITH ('connector' = 'datagen', 'password' = 'sekrit-4711');`)); err != nil {
		t.Fatal(err)
	}
	s.logf("connecting with %s", "sekrit-4711")
	e.logf("the engine's own line with %s", "nothing secret")
	if strings.Contains(log.String(), "sekrit-4711") || !strings.Contains(log.String(), "connecting with") {
		t.Fatalf("the session's log:\n%s", log.String())
	}
}
