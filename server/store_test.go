package server

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A job keeps its last `keep` versions; files are replaced whole, with
// no temporary file left behind.
func TestStoreVersions(t *testing.T) {
	dir := t.TempDir()
	st, err := openStore(dir, 3)
	if err != nil {
		t.Fatal(err)
	}
	for v := 1; v <= 5; v++ {
		if err := st.saveVersion("j", v, "-- version "+string(rune('0'+v))); err != nil {
			t.Fatal(err)
		}
	}
	vs, err := st.versions("j")
	if err != nil {
		t.Fatal(err)
	}
	var nums []int
	for _, v := range vs {
		nums = append(nums, v.Version)
		if v.SQL != "-- version "+string(rune('0'+v.Version)) || v.CreatedAt.IsZero() {
			t.Errorf("version %d: %+v", v.Version, v)
		}
	}
	if !slices.Equal(nums, []int{3, 4, 5}) {
		t.Fatalf("versions kept: %v, want 3 4 5", nums)
	}
	if err := st.saveJob(jobRecord{Name: "j", Status: statusRunning, Version: 5}); err != nil {
		t.Fatal(err)
	}
	if err := st.saveJob(jobRecord{Name: "j", Status: statusStopped, Version: 5}); err != nil {
		t.Fatal(err)
	}
	recs, err := st.jobs()
	if err != nil || len(recs) != 1 || recs[0].Status != statusStopped {
		t.Fatalf("jobs: %+v %v", recs, err)
	}
	if err := st.appendCatalog([]string{"CREATE TABLE a (x INT) WITH ('connector' = 'blackhole')"}); err != nil {
		t.Fatal(err)
	}
	if err := st.appendCatalog([]string{"DROP TABLE a"}); err != nil {
		t.Fatal(err)
	}
	if cat, _ := st.catalog(); cat != "CREATE TABLE a (x INT) WITH ('connector' = 'blackhole');\nDROP TABLE a;\n" {
		t.Fatalf("catalog.sql: %q", cat)
	}
	filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if strings.Contains(filepath.Base(path), ".tmp-") {
			t.Errorf("a temporary file is left: %s", path)
		}
		return nil
	})

	// A job directory without its record (a creation a crash cut short)
	// is removed; a deletion a crash cut short is finished.
	os.MkdirAll(filepath.Join(dir, "jobs", "half", "versions"), 0o700)
	os.MkdirAll(filepath.Join(dir, "trash", "old-1234"), 0o700)
	st, err = openStore(dir, 3)
	if err != nil {
		t.Fatal(err)
	}
	if recs, err := st.jobs(); err != nil || len(recs) != 1 {
		t.Fatalf("jobs: %+v %v", recs, err)
	}
	for _, p := range []string{"jobs/half", "trash"} {
		if _, err := os.Stat(filepath.Join(dir, p)); !os.IsNotExist(err) {
			t.Errorf("%s is left: %v", p, err)
		}
	}
	if err := st.deleteJob("j"); err != nil {
		t.Fatal(err)
	}
	if recs, err := st.jobs(); err != nil || len(recs) != 0 {
		t.Fatalf("jobs after deleteJob: %+v %v", recs, err)
	}
}
