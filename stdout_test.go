package sluice_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/sluicesql/sluice"
)

// Print sinks of one job write to the engine's Stdout from their own
// goroutines: the engine serializes the writes, so a writer that is not
// safe for concurrent use (a bytes.Buffer) loses no line. It lost one
// sink's rows about once in 150 runs before.
func TestStdoutSharedBySinks(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "events.jsonl", reuseEvents)
	job := reuseDDL + `
CREATE TABLE small (k STRING, v2 INT) WITH ('connector' = 'print', 'print-identifier' = 'small');
CREATE TABLE counts (k STRING, n BIGINT) WITH ('connector' = 'print', 'print-identifier' = 'counts');
EXECUTE STATEMENT SET BEGIN
INSERT INTO small SELECT k, v2 FROM events WHERE v < 10;
INSERT INTO counts SELECT k, COUNT(*) FROM events GROUP BY k;
END;`
	src := strings.ReplaceAll(job, "$DIR", dir)
	for i := 0; i < 300; i++ {
		var stdout, log bytes.Buffer
		e, _ := sluice.Open(sluice.Options{Stdout: &stdout, Log: &log})
		err := e.Run(context.Background(), "test.sql", []byte(src))
		e.Close()
		if err != nil || !strings.Contains(stdout.String(), "counts> +I[a, 3]") {
			t.Fatalf("run %d: err %v\nstdout:\n%s\nlog:\n%s", i, err, stdout.String(), log.String())
		}
	}
}
