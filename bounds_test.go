package sluice_test

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/exec"
)

// TestParallelismBounded: a parallelism above exec.MaxParallelism is an
// error when it is SET (positioned at the statement) and when a job starts
// with it from the engine's initial configuration (sluice -D), instead of
// a graph whose exchanges take memory and time quadratic in it.
func TestParallelismBounded(t *testing.T) {
	const query = `
CREATE TABLE src (k INT) WITH ('connector' = 'datagen', 'number-of-rows' = '10');
CREATE TABLE out (k INT, n BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT k, COUNT(*) FROM src GROUP BY k;`
	tooMany := strconv.Itoa(exec.MaxParallelism + 1)
	for _, v := range []string{"1000000000", tooMany, "99999999999999999999"} {
		_, err := runSQL(t, nil, t.TempDir(), "\nSET 'parallelism.default' = '"+v+"';"+query)
		want := fmt.Sprintf("test.sql:2:1: parallelism.default must be an integer between 1 and %d", exec.MaxParallelism)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("SET %s: got %v, want %q", v, err, want)
		}
	}

	e, err := sluice.Open(sluice.Options{Stdout: io.Discard, Config: map[string]string{"parallelism.default": tooMany}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	err = e.Run(context.Background(), "test.sql", []byte(query))
	if err == nil || !strings.Contains(err.Error(), "parallelism.default") || !strings.Contains(err.Error(), strconv.Itoa(exec.MaxParallelism)) {
		t.Fatalf("a job started with parallelism.default = %s: got %v, want an error naming the option and its maximum", tooMany, err)
	}
}

// A generated source's partitions and rate are bounded; the error is
// positioned at the option.
func TestGeneratedSourceBounds(t *testing.T) {
	for _, tc := range []struct{ with, want string }{
		{`'connector' = 'datagen', 'number-of-rows' = '10', 'partitions' = '65536'`,
			"test.sql:2:91: table src: option 'partitions' must be between 1 and 1024, got 65536"},
		{`'connector' = 'datagen', 'rows-per-second' = '1e30'`,
			"test.sql:2:66: table src: option 'rows-per-second' must be a number of rows per second above 0 and at most 1e12, got '1e30'"},
		{`'connector' = 'nexmark', 'events.num' = '10', 'partitions' = '65536'`,
			"test.sql:2:87: table src: option 'partitions' must be between 1 and 1024, got 65536"},
	} {
		_, err := runSQL(t, nil, t.TempDir(), `
CREATE TABLE src (event_type INT) WITH (`+tc.with+`);
SELECT * FROM src;`)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.with, err, tc.want)
		}
	}
}
