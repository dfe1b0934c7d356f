package sluice_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicesql/sluice"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected outputs of golden tests")

// TestExplainGolden plans every testdata/explain/*.sql file and compares
// the printed plan (or the rendered error) with the .plan file beside it.
func TestExplainGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/explain/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".sql")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			e, err := sluice.Open(sluice.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			got, err := e.Explain(filepath.Base(f), src)
			if err != nil {
				got = "ERROR:\n" + sluice.FormatError(err, src) + "\n"
			}
			want := strings.TrimSuffix(f, ".sql") + ".plan"
			if *rewrite {
				if err := os.WriteFile(want, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			exp, err := os.ReadFile(want)
			if err != nil {
				t.Fatalf("%v (run with -rewrite to create it)", err)
			}
			if got != string(exp) {
				t.Errorf("plan of %s differs.\n--- got\n%s--- want\n%s", f, got, exp)
			}
		})
	}
}
