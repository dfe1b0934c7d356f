package sluice_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// An OVER aggregation with 'state.dir' keeps its frames and its watermark:
// run again over a grown input, it goes on from the committed frames, emits
// only the new rows, and drops a new row at or behind the newest time it
// emitted as late.
func TestOverResumeFromStateDir(t *testing.T) {
	dir := t.TempDir()
	stateDir := filepath.Join(dir, "state")
	line := func(sec, v int) string {
		return fmt.Sprintf("{\"k\":\"k0\",\"ts\":\"2020-01-01 00:00:%02d\",\"v\":%d}\n", sec, v)
	}
	src := `SET 'state.dir' = '` + stateDir + `';
SET 'execution.checkpointing.interval' = '50ms';
CREATE TABLE events (k STRING, ts TIMESTAMP(3), v BIGINT, WATERMARK FOR ts AS ts)
WITH ('connector' = 'filesystem', 'path' = '$DIR/events.jsonl', 'format' = 'json');
SELECT k, v, SUM(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS s FROM events;`
	writeFile(t, dir, "events.jsonl", line(1, 1)+line(2, 2)+line(3, 3))
	out, err := runSQL(t, nil, dir, src)
	if err != nil {
		t.Fatal(err)
	}
	if want := "k, v, s\n+I[k0, 1, 1]\n+I[k0, 2, 3]\n+I[k0, 3, 6]"; strings.TrimSpace(out) != want {
		t.Fatalf("first run:\n%s\nwant\n%s", out, want)
	}
	// The first lines change: a run that re-read them would emit them.
	writeFile(t, dir, "events.jsonl", line(1, 100)+line(2, 100)+line(3, 100)+line(4, 4)+line(3, 50)+line(5, 5))
	out, err = runSQL(t, nil, dir, src)
	if err != nil {
		t.Fatal(err)
	}
	if want := "k, v, s\n+I[k0, 4, 9]\n+I[k0, 5, 12]"; strings.TrimSpace(out) != want {
		t.Fatalf("second run:\n%s\nwant\n%s", out, want)
	}
}
