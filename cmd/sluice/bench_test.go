package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchNexmark: `sluice bench nexmark` runs the suite's queries from
// the repository's testdata and prints each one's figure beside its
// floor, and a query that cannot run as its error.
func TestBenchNexmark(t *testing.T) {
	suite, err := filepath.Abs("../../testdata/nexmark")
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := runCLI(t, t.TempDir(), "", "bench", "nexmark", "--isolate=false", "--dir", suite, "--events", "2000", "--query", "q2,q14,q23")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 5 || !strings.Contains(lines[0], "2000 events per query") {
		t.Fatalf("want a header, a title line and three queries:\n%s", out)
	}
	if f := strings.Fields(lines[2]); f[0] != "q2" || f[4] != "875.0K" || f[5] != "175.0K" {
		t.Errorf("q2: %q, want its events per CPU second, floor 875.0K (five times Flink's) and Flink's 175.0K", lines[2])
	}
	// q14's WebAssembly module is named relative to the repository's
	// root, and this runs elsewhere: its error is printed in its row.
	if !strings.HasPrefix(lines[3], "q14") || !strings.Contains(lines[3], "failed: ") || !strings.Contains(lines[3], "examples/count_char/count_char.wasm") {
		t.Errorf("q14 away from the repository's root: %q, want its error", lines[3])
	}
	if f := strings.Fields(lines[4]); f[0] != "q23" || f[4] != "-" {
		t.Errorf("q23: %q, want no floor", lines[4])
	}
}

// TestBenchNexmarkNoSuite: away from the repository's root, the command
// says where it looked and how to name the suite.
func TestBenchNexmarkNoSuite(t *testing.T) {
	_, stderr, err := runCLI(t, t.TempDir(), "", "bench", "nexmark", "--events", "10")
	if err == nil || !strings.Contains(stderr, "testdata/nexmark/ddl.sql") || !strings.Contains(stderr, "--dir") {
		t.Fatalf("got %v, stderr %q; want the error naming the path and --dir", err, stderr)
	}
}

// TestBenchNexmarkIsolated: by default each query is measured by a run
// of the binary of its own, whose row is printed under one header.
func TestBenchNexmarkIsolated(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	res := e2eRun(t, root, "bench", "nexmark", "--events", "2000", "--query", "q0,q2")
	lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
	if res.code != 0 || len(lines) != 4 || !strings.Contains(lines[0], "2000 events per query") {
		t.Fatalf("exit %d, want a header, a title line and two queries:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	for i, q := range []string{"q0", "q2"} {
		if f := strings.Fields(lines[2+i]); len(f) < 6 || f[0] != q {
			t.Errorf("row %d: %q, want %s's figures", i, lines[2+i], q)
		}
	}
}
