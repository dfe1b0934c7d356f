package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicesql/sluice/client"
	"github.com/sluicesql/sluice/internal/kafkatest"
)

// windowJob is a job counting the rows of topic "in" per key and minute
// into dir/counts.json (JSON lines), its output filtered by filter and with the
// window's end as a column when withEnd, and a window of size.
func windowJob(bs, dir, filter, size string, withEnd bool) string {
	cols, sel := "k STRING, ws TIMESTAMP(3), n BIGINT", "k, window_start, n"
	if withEnd {
		cols, sel = cols+", we TIMESTAMP(3)", sel+", window_end"
	}
	return fmt.Sprintf(`CREATE TABLE src (k STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ('connector' = 'kafka', 'topic' = 'in',
  'properties.bootstrap.servers' = '%s', 'scan.startup.mode' = 'earliest-offset', 'format' = 'json');
CREATE TABLE counts (%s) WITH ('connector' = 'filesystem', 'path' = '%s/counts.json', 'format' = 'json');
SET 'execution.checkpointing.interval' = '100ms';
INSERT INTO counts SELECT %s FROM (
  SELECT k, window_start, window_end, COUNT(*) AS n
  FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL %s))
  GROUP BY k, window_start, window_end) WHERE %s;
`, bs, cols, dir, sel, size, filter)
}

func produceTicks(t *testing.T, bs string, n int, at time.Time, keys ...string) {
	t.Helper()
	var recs []*kgo.Record
	for i := range n {
		for _, k := range keys {
			ts := at.Add(time.Duration(i) * time.Millisecond).Format("2006-01-02 15:04:05.000")
			recs = append(recs, &kgo.Record{Value: fmt.Appendf(nil, `{"k":%q,"ts":%q}`, k, ts)})
		}
	}
	kafkatest.Produce(t, bs, "in", recs...)
}

// windowCounts reads the committed counts in dir (counts.json, which
// each checkpoint's commit appends to): key/window start → n.
func windowCounts(t *testing.T, dir string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, f := range []string{filepath.Join(dir, "counts.json")} {
		b, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if line == "" {
				continue
			}
			var row struct {
				K  string
				WS string
				N  int
			}
			if err := json.Unmarshal([]byte(line), &row); err != nil {
				t.Fatalf("%s: %q: %v", f, line, err)
			}
			out[row.K+"/"+row.WS] += row.N
		}
	}
	return out
}

// An update that changes only a filter after a window and adds a sink
// column keeps the window's state: the window open at the update counts
// the rows of both versions. Changing the window's size is reported as
// dropping its state and refused without allow_state_loss; a rollback
// is an update to a kept version's SQL. Through the Go client, as the
// CLI calls it.
func TestUpdateKeepsWindowState(t *testing.T) {
	bs := kafkatest.Start(t, 1, "in")
	dir, out := t.TempDir(), t.TempDir()
	ts := startServer(t, dir, false, "")
	c := &client.Client{Server: ts.url}
	ctx := context.Background()
	base := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)

	v1 := windowJob(bs, out, "n > 0", "'1' MINUTE", false)
	if _, err := c.Submit(ctx, "counts", v1, nil); err != nil {
		t.Fatal(err)
	}
	produceTicks(t, bs, 10, base, "a", "b")
	// The 20 rows are in a committed checkpoint before the update.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		j, err := c.Job(ctx, "counts")
		if err != nil {
			t.Fatal(err)
		}
		if j.Metrics.RowsIn >= 20 && j.Metrics.Checkpoints > 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job did not read the first rows: %+v", j)
		}
	}

	v2 := windowJob(bs, out, "n >= 1", "'1' MINUTE", true)
	dry, err := c.Update(ctx, "counts", v2, client.UpdateOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if dry.Applied || dry.Verdict != "compatible" || dry.Version != 2 {
		t.Fatalf("dry run: %+v", dry)
	}
	u, err := c.Update(ctx, "counts", v2, client.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !u.Applied || u.Version != 2 || u.Job == nil || u.Job.Status != "running" {
		t.Fatalf("update: %+v", u)
	}
	for _, ch := range u.Changes {
		if ch.Change != "kept" {
			t.Errorf("the update changes %+v, want every state kept", ch)
		}
	}
	produceTicks(t, bs, 10, base.Add(20*time.Second), "a", "b")
	produceTicks(t, bs, 1, base.Add(3*time.Minute), "z") // closes the first window
	ws := base.Format("2006-01-02 15:04:05")
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		got := windowCounts(t, out)
		if got["a/"+ws] == 20 && got["b/"+ws] == 20 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("counts after the update: %v, want a and b at 20 in the window of %s (10 before the update, 10 after)", got, ws)
		}
	}

	// A window of another size drops the window's state: refused.
	v3 := windowJob(bs, out, "n >= 1", "'2' MINUTE", true)
	_, err = c.Update(ctx, "counts", v3, client.UpdateOptions{})
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Status != 409 || ce.Code != "conflict" || ce.Update == nil || ce.Update.Verdict != "incompatible" {
		t.Fatalf("window size changed: %v (%+v)", err, ce)
	}
	dropped := false
	for _, ch := range ce.Update.Changes {
		if ch.Change == "dropped" && strings.Contains(ch.Reason, "window size changed") {
			dropped = true
		}
	}
	if !dropped {
		t.Fatalf("the refusal does not say the window's state is dropped: %+v", ce.Update.Changes)
	}
	if j, _ := c.Job(ctx, "counts"); j.Version != 2 || j.Status != "running" {
		t.Fatalf("after a refused update: %+v", j)
	}

	// Rollback to version 1: a new version with its SQL, the window's
	// state kept.
	rb, err := c.Rollback(ctx, "counts", 1, client.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !rb.Applied || rb.Version != 3 || rb.Verdict != "compatible" {
		t.Fatalf("rollback: %+v", rb)
	}
	vs, err := c.Versions(ctx, "counts")
	if err != nil || len(vs) != 3 || vs[2].SQL != v1 {
		t.Fatalf("versions after the rollback: %v %+v", err, vs)
	}
	if _, err := c.Rollback(ctx, "counts", 9, client.UpdateOptions{}); !errors.As(err, &ce) || ce.Status != 404 {
		t.Fatalf("rollback to a version never made: %v", err)
	}

	// With allow_state_loss the bigger window starts from zero.
	u, err = c.Update(ctx, "counts", v3, client.UpdateOptions{AllowStateLoss: true})
	if err != nil || !u.Applied || u.Verdict != "incompatible" {
		t.Fatalf("update allowing the loss: %v %+v", err, u)
	}
	if j := ts.waitJob("counts", "running"); j.Version != 4 {
		t.Fatalf("after the update: %+v", j)
	}
	if !strings.Contains(ts.log.String(), "dropped the state of") {
		t.Errorf("the log does not say which state was dropped:\n%s", ts.log.String())
	}
	// A script that does not plan is a bad_sql error with its position.
	_, err = c.Update(ctx, "counts", strings.Replace(v1, "COUNT(*)", "COUNT(nope)", 1), client.UpdateOptions{})
	if !errors.As(err, &ce) || ce.Status != 400 || ce.Code != "bad_sql" || ce.Line == 0 {
		t.Fatalf("bad SQL: %v", err)
	}
}

// A metric group that gains a metric in an update is kept, partly: its
// other metrics carry their values over, the new one starts from zero,
// and the update is partially compatible (applied without
// --allow-state-loss).
func TestUpdateMetricGroupPartial(t *testing.T) {
	bs := kafkatest.Start(t, 1, "in")
	dir, out := t.TempDir(), t.TempDir()
	ts := startServer(t, dir, false, "")
	c := &client.Client{Server: ts.url}
	ctx := context.Background()
	job := func(metrics string) string {
		return fmt.Sprintf(`CREATE TABLE src (id BIGINT) WITH ('connector' = 'kafka', 'topic' = 'in',
  'properties.bootstrap.servers' = '%s', 'scan.startup.mode' = 'earliest-offset', 'format' = 'json');
CREATE VIEW ev AS SELECT id, MOD(id, 3) AS k FROM src;
CREATE METRIC GROUP m ON ev KEY BY (k) (%s);
CREATE TABLE counts (id BIGINT, n BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s/counts.json', 'format' = 'json');
SET 'execution.checkpointing.interval' = '100ms';
INSERT INTO counts SELECT id, n FROM m;
`, bs, metrics, out)
	}
	if _, err := c.Submit(ctx, "counts", job("METRIC n AS COUNT(*)"), nil); err != nil {
		t.Fatal(err)
	}
	produceIDs(t, bs, "in", 0, 30)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		j, err := c.Job(ctx, "counts")
		if err != nil {
			t.Fatal(err)
		}
		if j.Metrics.RowsIn >= 30 && j.Metrics.Checkpoints > 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job did not read the first rows: %+v", j)
		}
	}
	u, err := c.Update(ctx, "counts", job("METRIC n AS COUNT(*), METRIC total AS SUM(id)"), client.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !u.Applied || u.Verdict != "partially compatible" {
		t.Fatalf("update: %+v", u)
	}
	found := false
	for _, ch := range u.Changes {
		if strings.Contains(ch.Reason, "partly kept") {
			found = ch.Change == "kept" && strings.Contains(ch.Reason, "SUM(") && !strings.Contains(ch.Reason, "let go")
		}
	}
	if !found {
		t.Fatalf("no metric group change kept partly, the sum new: %+v", u.Changes)
	}
}
