//go:build linux

package trim

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// rssFile reads the process's resident file-backed memory, in kB.
func rssFile(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "RssFile:"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Skip("no RssFile in /proc/self/status")
	return 0
}

func TestStartup(t *testing.T) {
	before := rssFile(t)
	Startup()
	after := rssFile(t)
	t.Logf("resident file-backed memory: %d kB before, %d kB after", before, after)
	if after >= before {
		t.Errorf("Startup dropped nothing: %d kB before, %d kB after", before, after)
	}
	// The program goes on: code and read-only data fault back in, and
	// what it wrote before is still there.
	m := map[string]int{}
	for i := range 1000 {
		m[strconv.Itoa(i)] = i
	}
	if m["999"] != 999 || len(m) != 1000 {
		t.Fatal("a map lost its contents")
	}
}
