package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// The settings of sluice serve: a flag wins over the environment, which
// wins over the config file (name = value lines or JSON), which wins over
// the default.
func TestServeConfigPrecedence(t *testing.T) {
	dir := t.TempDir()
	lines := filepath.Join(dir, "sluice.conf")
	os.WriteFile(lines, []byte("# the server\nlisten = 127.0.0.1:9000\ndata-dir = \"/from/file\"\nauth = false\nkeep-versions = 5\n"), 0o644)
	jsonFile := filepath.Join(dir, "sluice.json")
	os.WriteFile(jsonFile, []byte(`{"listen": "127.0.0.1:9000", "data-dir": "/from/file", "auth": false, "keep-versions": 5}`), 0o644)
	for _, file := range []string{lines, jsonFile} {
		serve, _ := newServe(os.Stdout, os.Stderr)
		flags := serve.Flags()
		if err := flags.Parse([]string{"--data-dir", "/from/flag"}); err != nil {
			t.Fatal(err)
		}
		t.Setenv("SLUICE_LISTEN", "127.0.0.1:9001")
		t.Setenv("SLUICE_DATA_DIR", "/from/env")
		get, err := serveConfig(flags, file)
		if err != nil {
			t.Fatal(err)
		}
		for name, want := range map[string]string{"data-dir": "/from/flag", "listen": "127.0.0.1:9001", "auth": "false",
			"keep-versions": "5", "log-format": "text"} {
			if got := get(name); got != want {
				t.Errorf("%s: %s = %q, want %q", filepath.Base(file), name, got, want)
			}
		}
	}
	bad := filepath.Join(dir, "bad.conf")
	os.WriteFile(bad, []byte("listen = 127.0.0.1:1\nlisten-adress = x\n"), 0o644)
	if _, err := serveConfig(pflag.NewFlagSet("x", pflag.ContinueOnError), bad); err == nil || !strings.Contains(err.Error(), "listen-adress") {
		t.Errorf("an unknown setting in the file: %v", err)
	}
}

// sluice serve refuses a non-loopback address while auth is off, before
// it opens anything.
func TestServeRefusesOpenAddressWithoutAuth(t *testing.T) {
	dir := t.TempDir()
	_, stderr, err := runCLI(t, dir, "", "serve", "--data-dir", filepath.Join(dir, "data"), "--auth=false", "--listen", "0.0.0.0:0")
	if err == nil || !strings.Contains(stderr, "auth off") {
		t.Fatalf("err %v, stderr %q", err, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); !os.IsNotExist(err) {
		t.Errorf("the data directory was created: %v", err)
	}
	t.Setenv("SLUICE_AUTH", "false")
	t.Setenv("SLUICE_LISTEN", "0.0.0.0:0")
	if _, stderr, err := runCLI(t, dir, "", "serve", "--data-dir", filepath.Join(dir, "data")); err == nil || !strings.Contains(stderr, "auth off") {
		t.Fatalf("from the environment: err %v, stderr %q", err, stderr)
	}
}

// sluice token create prints a token once; the data directory keeps only
// its hash.
func TestTokenCreate(t *testing.T) {
	dir := t.TempDir()
	out, stderr, err := runCLI(t, dir, "", "token", "create", "--data-dir", "data", "--name", "ci")
	if err != nil {
		t.Fatal(err, stderr)
	}
	token := strings.TrimSpace(out)
	if !strings.HasPrefix(token, "sluice_") || len(token) < 40 {
		t.Fatalf("token %q", token)
	}
	b, err := os.ReadFile(filepath.Join(dir, "data", "tokens.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tf struct{ Tokens []map[string]string }
	if err := json.Unmarshal(b, &tf); err != nil || len(tf.Tokens) != 1 || tf.Tokens[0]["name"] != "ci" || len(tf.Tokens[0]["sha256"]) != 64 {
		t.Fatalf("tokens.json: %v %s", err, b)
	}
	if strings.Contains(string(b), token) || strings.Contains(string(b), strings.TrimPrefix(token, "sluice_")) {
		t.Fatalf("tokens.json holds the token:\n%s", b)
	}
	if _, stderr, err := runCLI(t, dir, "", "token", "create", "--data-dir", "data", "--name", "ci"); err == nil || !strings.Contains(stderr, "exists") {
		t.Fatalf("a second token of the name: %v %s", err, stderr)
	}
}
