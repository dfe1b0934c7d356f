package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runCLI runs the command in process with args and stdin, in dir.
func runCLI(t *testing.T, dir, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errw bytes.Buffer
	root := newRoot(strings.NewReader(stdin), &out, &errw)
	root.SetArgs(append([]string{"--quiet"}, args...))
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	err = root.Execute()
	return out.String(), errw.String(), err
}

const listingSQL = `CREATE TABLE bids (price INT, item STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '2');
SHOW TABLES;
SHOW FUNCTIONS;
DESCRIBE bids;
EXPLAIN SELECT item FROM bids WHERE price > 1;
`

// checkListings checks what listingSQL shows.
func checkListings(t *testing.T, how, out string) {
	t.Helper()
	for _, want := range []string{"table name\nbids\n", "function name\n", "\nUPPER\n", "price", "TableSourceScan(table=[bids]"} {
		if !strings.Contains(out, want) {
			t.Errorf("%s: the output lacks %q:\n%s", how, want, out)
		}
	}
}

// TestListingsPrinted: SHOW TABLES, SHOW FUNCTIONS, DESCRIBE and EXPLAIN
// print their text in `sluice run`, `sluice sql FILE`, `sluice sql -e` and
// the REPL (they printed nothing).
func TestListingsPrinted(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "job.sql"), []byte(listingSQL), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		how   string
		stdin string
		args  []string
	}{
		{"run", "", []string{"run", "job.sql"}},
		{"sql FILE", "", []string{"sql", "job.sql"}},
		{"sql -e", "", []string{"sql", "-e", listingSQL}},
		{"sql (REPL)", listingSQL, []string{"sql"}},
	} {
		out, errw, err := runCLI(t, dir, c.stdin, c.args...)
		if err != nil {
			t.Errorf("%s: %v\n%s", c.how, err, errw)
			continue
		}
		checkListings(t, c.how, out)
	}
}

// TestREPLSplitsWithTheScanner: a ';' that ends a line inside a string, a
// quoted identifier or a comment does not end the statement (the REPL cut
// it there); two statements on one line both run.
func TestREPLSplitsWithTheScanner(t *testing.T) {
	in := "SELECT 'a;\nb' AS s;\nSELECT 1 AS `x;\ny`; SELECT /* c;\n */ 2 AS z;\n"
	out, errw, err := runCLI(t, t.TempDir(), in, "sql")
	if err != nil || errw != "" {
		t.Fatalf("%v\nstderr:\n%s", err, errw)
	}
	for _, want := range []string{"s\n+I[a;\nb]\n", "x;\ny\n+I[1]\n", "z\n+I[2]\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
}

// TestUnknownSetWarns: `sluice run`, `sluice sql` and `-D` warn on standard
// error of a key Sluice does not read, naming the nearest known one, and
// run the statements all the same (Flink passes unknown keys through).
func TestUnknownSetWarns(t *testing.T) {
	dir := t.TempDir()
	const src = "SET 'execution.checkpointing.intervall' = '10 s';\nSET 'parallelism.default' = '1';\n"
	if err := os.WriteFile(filepath.Join(dir, "job.sql"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	const want = "job.sql:1:1: warning: Sluice does not read the option 'execution.checkpointing.intervall': it has no effect (did you mean 'execution.checkpointing.interval'?)"
	for _, c := range []struct {
		how, want string
		args      []string
	}{
		{"run", want, []string{"run", "job.sql"}},
		{"sql FILE", want, []string{"sql", "job.sql"}},
		{"sql -e", strings.Replace(want, "job.sql", "<sql>", 1), []string{"sql", "-e", src}},
		{"-D", "warning: Sluice does not read the option 'state.dri' (sluice -D or Options.Config): it has no effect (did you mean 'state.dir'?)",
			[]string{"-D", "state.dri=x", "sql", "-e", "SET;"}},
	} {
		var out, errw bytes.Buffer
		root := newRoot(strings.NewReader(""), &out, &errw)
		root.SetArgs(c.args)
		wd, _ := os.Getwd()
		if err := os.Chdir(dir); err != nil {
			t.Fatal(err)
		}
		err := root.Execute()
		os.Chdir(wd)
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.how, err, errw.String())
		}
		if !strings.Contains(errw.String(), c.want) {
			t.Errorf("%s: standard error lacks %q:\n%s", c.how, c.want, errw.String())
		}
		if strings.Count(errw.String(), "warning:") != 1 {
			t.Errorf("%s: want one warning:\n%s", c.how, errw.String())
		}
	}
}
