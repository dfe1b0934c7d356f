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
