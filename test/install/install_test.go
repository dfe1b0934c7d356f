// Package install_test installs the release tarball into a scratch root
// with its install.sh, runs the installed server from the installed
// configuration, upgrades it and uninstalls it.
//
//	scripts/release.sh ci
//	SLUICE_INSTALL_TEST=1 SLUICE_RELEASE=$PWD/dist/sluice-ci-linux-amd64.tar.gz go test ./test/install
//
// .ci/run does both.
package install_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestInstall(t *testing.T) {
	if os.Getenv("SLUICE_INSTALL_TEST") != "1" {
		t.Skip("set SLUICE_INSTALL_TEST=1 and SLUICE_RELEASE to a release tarball (scripts/release.sh)")
	}
	tarball, err := filepath.Abs(os.Getenv("SLUICE_RELEASE"))
	if err != nil || os.Getenv("SLUICE_RELEASE") == "" {
		t.Fatalf("SLUICE_RELEASE=%q: give the tarball scripts/release.sh made", os.Getenv("SLUICE_RELEASE"))
	}
	// The tarball holds one directory: the binary, install.sh, the unit
	// and the configuration.
	work := t.TempDir()
	run(t, "", "tar", "-C", work, "-xzf", tarball)
	dirs, _ := filepath.Glob(filepath.Join(work, "sluice-*"))
	if len(dirs) != 1 {
		t.Fatalf("the tarball holds %v, want one sluice-* directory", dirs)
	}
	pkg := dirs[0]
	for _, f := range []string{"sluice", "install.sh", "sluice.service", "sluice.conf"} {
		if _, err := os.Stat(filepath.Join(pkg, f)); err != nil {
			t.Fatalf("the tarball lacks %s", f)
		}
	}
	if fi, _ := os.Stat(filepath.Join(pkg, "sluice")); fi != nil {
		t.Logf("release binary: %.1f MB", float64(fi.Size())/1e6)
	}

	root := filepath.Join(work, "root")
	out := run(t, pkg, "./install.sh", "--root", root)
	t.Log(strings.TrimSpace(out))
	bin := filepath.Join(root, "usr/local/bin/sluice")
	conf := filepath.Join(root, "etc/sluice/sluice.conf")
	unit := filepath.Join(root, "etc/systemd/system/sluice.service")
	data := filepath.Join(root, "var/lib/sluice")
	for _, p := range []string{bin, conf, unit, data} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("not installed: %v", err)
		}
	}
	u := read(t, unit)
	if !strings.Contains(u, "ExecStart=/usr/local/bin/sluice serve --config /etc/sluice/sluice.conf") || strings.Contains(u, "@") {
		t.Fatalf("the unit's paths are not filled in:\n%s", u)
	}
	if c := read(t, conf); !strings.Contains(c, "data-dir = /var/lib/sluice") || strings.Contains(c, "@") {
		t.Fatalf("the configuration's paths are not filled in:\n%s", c)
	}
	if v := strings.TrimSpace(run(t, "", bin, "version")); !strings.HasPrefix(v, "sluice ") || strings.HasSuffix(v, "-dev") {
		t.Fatalf("the installed binary's version is %q, want a stamped release", v)
	}

	// The installed server runs from the installed configuration (its
	// data directory moved into the scratch root by the environment,
	// which overrides the file), with auth on.
	token := strings.TrimSpace(lastLine(run(t, "", bin, "token", "create", "--data-dir", data, "--name", "admin")))
	addr := freeAddr(t)
	srv := exec.Command(bin, "serve", "--config", conf)
	srv.Env = append(os.Environ(), "SLUICE_DATA_DIR="+data, "SLUICE_LISTEN="+addr)
	var log bytes.Buffer
	srv.Stdout, srv.Stderr = &log, &log
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Process.Kill()
	waitHealthy(t, addr, &log)
	body := `{"name": "probe", "sql": "CREATE TABLE g (n INT) WITH ('connector' = 'datagen', 'rows-per-second' = '10'); CREATE TABLE b (n INT) WITH ('connector' = 'blackhole'); INSERT INTO b SELECT n FROM g;"}`
	req, _ := http.NewRequest("POST", "http://"+addr+"/v1/jobs", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 || !strings.Contains(string(b), `"running"`) {
		t.Fatalf("POST /v1/jobs: %s %s\n%s", resp.Status, b, log.String())
	}
	srv.Process.Signal(syscall.SIGTERM)
	if err := srv.Wait(); err != nil {
		t.Fatalf("the server did not stop cleanly on SIGTERM: %v\n%s", err, log.String())
	}

	// Installing again (an upgrade) keeps the configuration as edited.
	os.WriteFile(conf, []byte(read(t, conf)+"# edited\n"), 0o640)
	run(t, pkg, "./install.sh", "--root", root)
	if !strings.Contains(read(t, conf), "# edited") {
		t.Fatal("an upgrade replaced the edited configuration")
	}

	// Uninstalling removes the binary and the unit, keeps the
	// configuration and the data (the job is still in it); --purge
	// removes those too.
	run(t, pkg, "./install.sh", "--uninstall", "--root", root)
	for _, p := range []string{bin, unit} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Fatalf("%s is still there after --uninstall", p)
		}
	}
	if _, err := os.Stat(filepath.Join(data)); err != nil {
		t.Fatal("--uninstall removed the data directory")
	}
	run(t, pkg, "./install.sh", "--uninstall", "--purge", "--root", root)
	var left []string
	filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			left = append(left, p)
		}
		return nil
	})
	if len(left) > 0 {
		t.Fatalf("files left after --uninstall --purge: %v", left)
	}
}

func run(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func lastLine(s string) string {
	var last string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			last = l
		}
	}
	return last
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func waitHealthy(t *testing.T, addr string, log fmt.Stringer) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the installed server never became healthy\n%s", log)
}
