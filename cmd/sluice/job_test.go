package main

import (
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicesql/sluice/server"
)

// The job commands against a server with auth on: publish, list, show,
// explain, update (dry run and applied), versions, rollback, stop,
// resume, delete, with tables and -o json; a SQL error shows the file's
// line and a caret; a bad token and an unknown job fail with the
// server's message.
func TestJobCommands(t *testing.T) {
	dir := t.TempDir()
	startJobServer(t, dir)

	job := func(sql string) string {
		return `CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '20');
CREATE TABLE hole (id BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO hole SELECT id FROM gen WHERE ` + sql + ";\n"
	}
	os.WriteFile(filepath.Join(dir, "v1.sql"), []byte(job("id > 0")), 0o644)
	os.WriteFile(filepath.Join(dir, "v2.sql"), []byte(job("id > 1")), 0o644)
	os.WriteFile(filepath.Join(dir, "bad.sql"), []byte(job("idd > 0")), 0o644)
	run := func(args ...string) (string, string) {
		t.Helper()
		out, stderr, err := runCLI(t, dir, "", append([]string{"job"}, args...)...)
		if err != nil {
			t.Fatalf("sluice job %s: %v\n%s", strings.Join(args, " "), err, stderr)
		}
		return out, stderr
	}
	fail := func(want string, args ...string) {
		t.Helper()
		_, stderr, err := runCLI(t, dir, "", append([]string{"job"}, args...)...)
		if err == nil || !strings.Contains(stderr, want) {
			t.Fatalf("sluice job %s: err %v, stderr %q; want %q", strings.Join(args, " "), err, stderr, want)
		}
	}

	if out, _ := run("submit", "v1.sql", "--name", "rule1", "-l", "team=sec"); !strings.Contains(out, "rule1") || !strings.Contains(out, "running") {
		t.Fatalf("submit printed:\n%s", out)
	}
	fail("bad.sql:3:43: column 'idd' not found", "submit", "bad.sql", "--name", "rule2")
	_, stderr, _ := runCLI(t, dir, "", "job", "submit", "bad.sql", "--name", "rule2")
	if lines := strings.Split(stderr, "\n"); len(lines) < 3 || !strings.HasPrefix(lines[1], "INSERT INTO hole") || strings.Index(lines[2], "^") != 42 {
		t.Fatalf("the error does not show the line and a caret under column 43:\n%s", stderr)
	}
	fail("exists", "submit", "v1.sql", "--name", "rule1")

	out, _ := run("list", "-l", "team=sec")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[0], "NAME") || !strings.Contains(lines[1], "team=sec") {
		t.Fatalf("list:\n%s", out)
	}
	if out, _ := run("list", "-l", "team=ops"); strings.Count(strings.TrimSpace(out), "\n") != 0 {
		t.Fatalf("list of another team:\n%s", out)
	}
	out, _ = run("list", "-o", "json")
	var list struct {
		Jobs []struct{ Name, Status string }
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list.Jobs) != 1 || list.Jobs[0].Name != "rule1" {
		t.Fatalf("list -o json: %v\n%s", err, out)
	}
	if out, _ := run("show", "rule1"); !strings.Contains(out, "Status:") || !strings.Contains(out, "SQL:") || !strings.Contains(out, "Plan:") ||
		!strings.Contains(out, "Operators:") || !strings.Contains(out, "TableSourceScan[1]  gen") || !strings.Contains(out, "Sink[3]") {
		t.Fatalf("show:\n%s", out)
	}
	fail(`no job named "rule11" (did you mean "rule1"?)`, "show", "rule11")
	if out, _ := run("explain", "v2.sql"); !strings.Contains(out, "Calc") && !strings.Contains(out, "Filter") {
		t.Fatalf("explain:\n%s", out)
	}

	if out, _ := run("update", "rule1", "v2.sql", "--dry-run"); !strings.Contains(out, "version 2 not applied: compatible") {
		t.Fatalf("update --dry-run:\n%s", out)
	}
	if out, _ := run("update", "rule1", "v2.sql"); !strings.Contains(out, "version 2 is running: compatible") || !strings.Contains(out, "kept") {
		t.Fatalf("update:\n%s", out)
	}
	if out, _ := run("versions", "rule1"); strings.Count(out, "\n") != 3 {
		t.Fatalf("versions:\n%s", out)
	}
	if out, _ := run("rollback", "rule1", "1", "-o", "json"); !strings.Contains(out, `"version": 3`) || !strings.Contains(out, `"applied": true`) {
		t.Fatalf("rollback:\n%s", out)
	}
	if out, _ := run("stop", "rule1"); !strings.Contains(out, "stopped") {
		t.Fatalf("stop:\n%s", out)
	}
	if out, _ := run("resume", "rule1"); !strings.Contains(out, "running") {
		t.Fatalf("resume:\n%s", out)
	}
	if out, _ := run("delete", "rule1"); !strings.Contains(out, "deleted rule1") {
		t.Fatalf("delete:\n%s", out)
	}
	fail("no job named", "show", "rule1")
	t.Setenv("SLUICE_TOKEN", "sluice_wrong")
	fail("error: invalid API token", "list")
}

// startJobServer starts a server with auth on over a data directory in
// dir, creates a token with the CLI, and points the job commands at the
// server with it (SLUICE_SERVER, SLUICE_TOKEN); the server closes with
// the test.
func startJobServer(t *testing.T, dir string) {
	t.Helper()
	data := filepath.Join(dir, "data")
	out, stderr, err := runCLI(t, dir, "", "token", "create", "--data-dir", data, "--name", "cli")
	if err != nil {
		t.Fatal(err, stderr)
	}
	s, err := server.New(server.Config{DataDir: data, Auth: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	t.Setenv("SLUICE_SERVER", "http://"+ln.Addr().String())
	t.Setenv("SLUICE_TOKEN", strings.TrimSpace(out))
}
