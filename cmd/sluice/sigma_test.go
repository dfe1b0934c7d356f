package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSigmaCommand: `sluice sigma` writes the script of the rules it
// translates, lists the others on standard error, and exits with an
// error when an input is malformed (writing nothing) or nothing
// translates; the script runs.
func TestSigmaCommand(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("events.jsonl", `{"id": 1, "cmd": "powershell -enc AAAA", "usr": "bob"}
{"id": 2, "cmd": "notepad.exe", "usr": "bob"}
{"id": 3, "cmd": "POWERSHELL /ENC BBBB", "usr": "system"}
`)
	write("mapping.yml", `table: events
fields:
  CommandLine: cmd
  User: usr
columns: {id: BIGINT}
alert_columns: [id]
prelude: |
  CREATE TABLE events (id BIGINT, cmd STRING, usr STRING)
  WITH ('connector' = 'filesystem', 'path' = 'events.jsonl', 'format' = 'json');
`)
	write("rules.yml", `title: Encoded PowerShell
level: high
tags: [attack.t1059.001]
detection:
  selection:
    CommandLine|windash|contains: ' -enc '
  filter:
    User: SYSTEM
  condition: selection and not filter
---
title: Unmapped
detection:
  selection:
    Image: x.exe
  condition: selection
`)
	out, errw, err := runCLI(t, dir, "", "sigma", "--mapping", "mapping.yml", "--create-alerts", "-o", "rules.sql", "rules.yml")
	if err != nil {
		t.Fatalf("%v\n%s", err, errw)
	}
	if out != "" {
		t.Errorf("with -o, standard output has %q", out)
	}
	if !strings.Contains(errw, "not translated: rules.yml:14:5: Unmapped: the field Image has no column in the mapping") {
		t.Errorf("standard error:\n%s", errw)
	}
	out, errw, err = runCLI(t, dir, "", "run", "rules.sql")
	if err != nil {
		t.Fatalf("%v\n%s", err, errw)
	}
	if want := "+I[sigma, 1, [encoded_powershell], high, [attack.t1059.001], 1]\n"; out != want {
		t.Errorf("alerts:\n%s\nwant:\n%s", out, want)
	}
	// --statement-set: an INSERT per rule; --ruleset names the ruleset.
	for _, c := range []struct{ flag, want string }{
		{"--statement-set", "+I[encoded_powershell, high, 1]\n"},
		{"--ruleset=windows", "+I[windows, 1, [encoded_powershell], high, [attack.t1059.001], 1]\n"},
	} {
		if _, errw, err := runCLI(t, dir, "", "sigma", "--mapping", "mapping.yml", "--create-alerts", c.flag, "-o", "rules.sql", "rules.yml"); err != nil {
			t.Fatalf("%s: %v\n%s", c.flag, err, errw)
		}
		out, errw, err = runCLI(t, dir, "", "run", "rules.sql")
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.flag, err, errw)
		}
		if out != c.want {
			t.Errorf("%s: alerts:\n%s\nwant:\n%s", c.flag, out, c.want)
		}
	}
	if _, errw, err := runCLI(t, dir, "", "sigma", "--mapping", "mapping.yml", "--ruleset", "1x", "rules.yml"); err == nil || !strings.Contains(errw, `--ruleset "1x" is not a SQL name`) {
		t.Errorf("--ruleset 1x: %v\n%s", err, errw)
	}

	// --check: a rule over a column the table lacks is reported, the
	// others are written.
	mapping, err := os.ReadFile(filepath.Join(dir, "mapping.yml"))
	if err != nil {
		t.Fatal(err)
	}
	write("checked.yml", strings.Replace(string(mapping), "  User: usr\n", "  User: usr\n  Image: img\n", 1))
	out, errw, err = runCLI(t, dir, "", "sigma", "--mapping", "checked.yml", "--check", "rules.yml")
	if err != nil {
		t.Fatalf("%v\n%s", err, errw)
	}
	if !strings.Contains(errw, "not translated: rules.yml:11:1: Unmapped: the engine refuses its SQL:") || !strings.Contains(errw, "img") {
		t.Errorf("--check: standard error:\n%s", errw)
	}
	if !strings.Contains(out, "RULE encoded_powershell WHEN") || strings.Contains(out, "RULE unmapped") {
		t.Errorf("--check: script:\n%s", out)
	}
	out, errw, err = runCLI(t, dir, "", "sigma", "--mapping", "checked.yml", "--check", "--statement-set", "rules.yml")
	if err != nil {
		t.Fatalf("%v\n%s", err, errw)
	}
	if !strings.Contains(errw, "not translated: rules.yml:11:1: Unmapped: the engine refuses its SQL:") || !strings.Contains(errw, "img") ||
		!strings.Contains(out, "'encoded_powershell' AS rule") || strings.Contains(out, "'unmapped' AS rule") {
		t.Errorf("--check --statement-set:\n%s\n%s", errw, out)
	}
	// Nothing translated: an error.
	write("none.yml", "title: Bad\ndetection: {s: {X|nomod: 1}, condition: s}\n")
	if _, errw, err := runCLI(t, dir, "", "sigma", "--table", "events", "none.yml"); err == nil || !strings.Contains(errw, "no rule could be translated") {
		t.Errorf("nothing translated: %v\n%s", err, errw)
	}
	// A malformed file: an error naming it, and no script.
	write("bad.yml", "title: [unclosed\n")
	out, errw, err = runCLI(t, dir, "", "sigma", "--mapping", "mapping.yml", "rules.yml", "bad.yml")
	if err == nil || out != "" || !strings.Contains(errw, "bad.yml") {
		t.Errorf("a malformed file: %v, out %q\n%s", err, out, errw)
	}
	// No table: an error before reading rules.
	if _, errw, err := runCLI(t, dir, "", "sigma", "rules.yml"); err == nil || !strings.Contains(errw, "no table") {
		t.Errorf("no table: %v\n%s", err, errw)
	}
}
