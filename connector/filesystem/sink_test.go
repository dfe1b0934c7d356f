package filesystem

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/types"
)

// txSink is a filesystem sink under test, as the runtime drives it.
type txSink struct {
	t *testing.T
	s *Sink
}

func newTxSink(t *testing.T, path string, snap []byte, opts connector.Options) *txSink {
	t.Helper()
	if opts == nil {
		opts = connector.Options{}
	}
	opts["connector"], opts["path"], opts["format"] = "filesystem", path, "json"
	s, err := New().CreateSink(connector.Table{Name: "out", Schema: bidSchema(), Options: opts}, env(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.(*Sink).Restore(context.Background(), connector.SinkRestore{Owner: "job/sink", Snapshot: snap, Checkpointed: true}); err != nil {
		t.Fatal(err)
	}
	return &txSink{t, s.(*Sink)}
}

func (x *txSink) write(items ...string) {
	x.t.Helper()
	b := types.NewBatch(len(items), 3)
	for _, it := range items {
		b.AddRow(types.Insert, types.NoOrigin, 3)[2] = types.StringValue(it)
	}
	if err := x.s.Write(context.Background(), b); err != nil {
		x.t.Fatal(err)
	}
}

// checkpoint is the sink's part of a checkpoint barrier: Prepare, then
// the snapshot that the checkpoint commits.
func (x *txSink) checkpoint() []byte {
	x.t.Helper()
	if err := x.s.Prepare(context.Background()); err != nil {
		x.t.Fatal(err)
	}
	snap, err := x.s.Snapshot()
	if err != nil {
		x.t.Fatal(err)
	}
	return snap
}

func (x *txSink) commit() {
	x.t.Helper()
	if err := x.s.Commit(context.Background()); err != nil {
		x.t.Fatal(err)
	}
}

// kill abandons the sink as a killed process does: its descriptors and
// its lock go, its files stay as they are (buffered bytes are lost).
func (x *txSink) kill() {
	for _, p := range append(append(slices.Collect(maps.Values(x.s.open)), x.s.rolled...), x.s.prepared...) {
		if p.f != nil {
			p.f.Close()
		}
	}
	if x.s.lock != nil {
		x.s.lock.Close()
	}
	if x.s.incarnation != nil {
		x.s.incarnation.Close()
	}
}

// visible returns the items of the rows a reader of path sees, sorted,
// failing on a line that is not a whole record.
func visible(t *testing.T, path string) []string {
	t.Helper()
	var files []string
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		entries, _ := os.ReadDir(path)
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), ".") {
				files = append(files, filepath.Join(path, e.Name()))
			}
		}
	} else {
		files = []string{path}
	}
	var items []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(data) > 0 && data[len(data)-1] != '\n' {
			t.Fatalf("%s ends in a torn line: %q", f, data)
		}
		for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			if l == "" {
				continue
			}
			var row struct{ Item *string }
			if err := json.Unmarshal([]byte(l), &row); err != nil || row.Item == nil {
				t.Fatalf("%s holds a torn or foreign line: %q", f, l)
			}
			items = append(items, *row.Item)
		}
	}
	sort.Strings(items)
	return items
}

func expect(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	sort.Strings(want)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("%s: visible %v, want %v", what, got, want)
	}
}

// In both layouts, rows become visible only when the checkpoint covering
// them commits; a sink restarted from a checkpoint finishes its pending
// commits, drops what came after it, and goes on; nothing torn or
// duplicated is ever visible, and nothing committed is lost.
func TestSinkExactlyOnceAcrossCrashes(t *testing.T) {
	for _, layout := range []string{"directory", "file"} {
		t.Run(layout, func(t *testing.T) {
			dir := t.TempDir()
			path := dir
			if layout == "file" {
				path = filepath.Join(dir, "out.jsonl")
			}
			// A long rollover: a part file goes on across checkpoints.
			opts := func() connector.Options {
				return connector.Options{"sink.rolling-policy.rollover-interval": "1 h"}
			}
			s := newTxSink(t, path, nil, opts())
			s.write("a", "b")
			expect(t, "before any checkpoint", visible(t, path))
			snap1 := s.checkpoint()
			s.commit()
			if layout == "file" {
				expect(t, "after the first commit", visible(t, path), "a", "b")
			} else {
				// Not rolled yet: the part file is still in progress.
				expect(t, "after the first commit", visible(t, path))
			}
			s.write("c")
			snap2 := s.checkpoint()
			// The process dies after checkpoint 2 completed, before its
			// commit, with rows written after it.
			s.write("lost-1", "lost-2")
			s.kill()
			_ = snap1

			s = newTxSink(t, path, snap2, opts())
			if layout == "file" {
				// Checkpoint 2's segment was appended at the restore.
				expect(t, "restored", visible(t, path), "a", "b", "c")
			}
			s.write("d")
			if err := s.s.PrepareEnd(context.Background()); err != nil {
				t.Fatal(err)
			}
			snap3, err := s.s.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			// Dies again, after the final checkpoint and before its commit.
			s.kill()
			s = newTxSink(t, path, snap3, opts())
			expect(t, "restored after the end", visible(t, path), "a", "b", "c", "d")
			if err := s.s.Close(); err != nil {
				t.Fatal(err)
			}
			// No in-progress file is left behind.
			left, _ := filepath.Glob(filepath.Join(dir, ".*.inprogress"))
			if len(left) != 0 {
				t.Fatalf("in-progress files left: %v", left)
			}
		})
	}
}

// A crash while the commit of one output file appended a segment leaves a
// torn line at the end of the file until the job restarts: the restart
// cuts it back and appends the segment whole.
func TestSinkTornAppendRepaired(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.jsonl")
	write(t, path, `{"bidtime":null,"price":null,"item":"old"}`+"\n")
	s := newTxSink(t, path, nil, nil)
	s.write("a", "b")
	snap := s.checkpoint()
	s.kill()
	// Half of the segment made it before the crash.
	seg := s.s.prepared[0].name
	data, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.Write(data[:len(data)/2+3])
	f.Close()
	s = newTxSink(t, path, snap, nil)
	expect(t, "repaired", visible(t, path), "old", "a", "b")
	s.s.Close()
}

// Another INSERT into the same output file, in this process or another,
// is refused while a sink writes it.
func TestSinkOneWriterPerFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.jsonl")
	s := newTxSink(t, path, nil, nil)
	defer s.s.Close()
	other, err := New().CreateSink(connector.Table{Name: "out", Schema: bidSchema(),
		Options: connector.Options{"connector": "filesystem", "path": path, "format": "json"}}, env(t))
	if err != nil {
		t.Fatal(err)
	}
	err = other.(*Sink).Restore(context.Background(), connector.SinkRestore{})
	if err == nil || !strings.Contains(err.Error(), "is being written by another INSERT") {
		t.Fatalf("got %v", err)
	}
}

// A part file rolls at a checkpoint once it is large enough or old
// enough; until then it stays in progress across checkpoints.
func TestSinkRollingPolicy(t *testing.T) {
	dir := t.TempDir()
	s := newTxSink(t, dir, nil, connector.Options{"sink.rolling-policy.file-size": "100b", "sink.rolling-policy.rollover-interval": "1 h"})
	s.write("a")
	s.checkpoint()
	s.commit()
	expect(t, "small and young", visible(t, dir))
	s.write("b", "c")
	s.checkpoint()
	s.commit()
	expect(t, "past the size", visible(t, dir), "a", "b", "c")
	now := int64(0)
	s.s.now = func() int64 { return now }
	s.write("d")
	s.checkpoint()
	s.commit()
	expect(t, "young again", visible(t, dir), "a", "b", "c")
	now += 2 * 3600 * 1e6
	s.checkpoint()
	s.commit()
	expect(t, "past the rollover interval", visible(t, dir), "a", "b", "c", "d")
	s.s.Close()
}

// partitionedSink is a sink of a table PARTITIONED BY (dt, hr), whose
// records hold item.
func partitionedSink(t *testing.T, dir string, opts connector.Options) *txSink {
	t.Helper()
	opts["connector"], opts["path"], opts["format"] = "filesystem", dir, "json"
	schema := types.NewSchema(
		types.Column{Name: "item", Type: types.String},
		types.Column{Name: "dt", Type: types.String},
		types.Column{Name: "hr", Type: types.String},
	)
	s, err := New().CreateSink(connector.Table{Name: "out", Schema: schema, PartitionKeys: []string{"dt", "hr"}, Options: opts}, env(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.(*Sink).Restore(context.Background(), connector.SinkRestore{Owner: "job/sink", Checkpointed: true}); err != nil {
		t.Fatal(err)
	}
	return &txSink{t, s.(*Sink)}
}

func (x *txSink) writeAt(item, dt, hr string) {
	x.t.Helper()
	b := types.NewBatch(1, 3)
	vals := b.AddRow(types.Insert, types.NoOrigin, 3)
	vals[0], vals[1], vals[2] = types.StringValue(item), types.StringValue(dt), types.StringValue(hr)
	if err := x.s.Write(context.Background(), b); err != nil {
		x.t.Fatal(err)
	}
}

func exists(path string) bool { _, err := os.Stat(path); return err == nil }

// With the partition-time trigger, a partition is committed at the
// commit of the first checkpoint whose watermark is past its time plus the
// delay: its in-progress file rolled at that checkpoint (so that its rows
// are visible with the success file), the others left alone.
func TestPartitionTimeCommit(t *testing.T) {
	dir := t.TempDir()
	s := partitionedSink(t, dir, connector.Options{
		"sink.partition-commit.trigger": "partition-time", "sink.partition-commit.delay": "1 h",
		"partition.time-extractor.timestamp-pattern": "$dt $hr:00:00",
		"sink.partition-commit.policy.kind":          "success-file",
		"sink.rolling-policy.rollover-interval":      "1 d"})
	s.writeAt("a", "2024-01-01", "10")
	s.writeAt("b", "2024-01-01", "11")
	at := func(hhmm string) int64 {
		ts, err := types.ParseTimestamp("2024-01-01 " + hhmm + ":00")
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	s.s.SinkWatermark(at("10:59"))
	s.checkpoint()
	s.commit()
	h10, h11 := filepath.Join(dir, "dt=2024-01-01", "hr=10"), filepath.Join(dir, "dt=2024-01-01", "hr=11")
	if exists(filepath.Join(h10, "_SUCCESS")) || len(visible(t, h10)) != 0 {
		t.Fatal("hr=10 committed before the watermark passed 11:00")
	}
	s.s.SinkWatermark(at("11:30"))
	s.checkpoint()
	s.commit()
	if !exists(filepath.Join(h10, "_SUCCESS")) {
		t.Fatal("hr=10 not committed after the watermark passed 11:00")
	}
	expect(t, "hr=10", visible(t, h10), "a")
	if exists(filepath.Join(h11, "_SUCCESS")) || len(visible(t, h11)) != 0 {
		t.Fatal("hr=11 committed before the watermark passed 12:00")
	}
	// A late row for hr=10: committed again once its file is.
	s.writeAt("late", "2024-01-01", "10")
	os.Remove(filepath.Join(h10, "_SUCCESS"))
	s.checkpoint()
	s.commit()
	if !exists(filepath.Join(h10, "_SUCCESS")) {
		t.Fatal("hr=10 not committed again after a late row")
	}
	expect(t, "hr=10 with the late row", visible(t, h10), "a", "late")
	s.s.Close()
}

// With the process-time trigger and a delay, a partition is committed
// once the delay has passed since the sink first wrote into it.
func TestProcessTimeCommit(t *testing.T) {
	dir := t.TempDir()
	s := partitionedSink(t, dir, connector.Options{"sink.partition-commit.delay": "10 min",
		"sink.partition-commit.policy.kind": "success-file"})
	now := int64(0)
	s.s.now = func() int64 { return now }
	s.writeAt("a", "d", "1")
	success := filepath.Join(dir, "dt=d", "hr=1", "_SUCCESS")
	now += 5 * 60e6
	s.checkpoint()
	s.commit()
	if exists(success) {
		t.Fatal("committed before its delay")
	}
	now += 6 * 60e6
	s.checkpoint()
	s.commit()
	if !exists(success) {
		t.Fatal("not committed after its delay")
	}
	expect(t, "committed", visible(t, filepath.Join(dir, "dt=d", "hr=1")), "a")
	s.s.Close()
}

// A run that dies before its first checkpoint leaves in-progress files no
// state knows of: the next run of the same sink removes them (their run's
// lock is free); those of a run still alive, or of another sink's, stay.
func TestSinkRemovesDeadRunsFiles(t *testing.T) {
	dir := t.TempDir()
	dead := newTxSink(t, dir, nil, nil)
	dead.write("lost")
	dead.s.Prepare(context.Background()) // synced, never committed
	dead.kill()
	other := newTxSinkOwned(t, dir, "another/sink")
	other.write("theirs")
	other.s.Prepare(context.Background())
	alive := newTxSink(t, dir, nil, nil) // a concurrent run of the first sink's owner
	alive.write("alive")
	alive.s.Prepare(context.Background())

	s := newTxSink(t, dir, nil, nil)
	left, _ := filepath.Glob(filepath.Join(dir, ".*.inprogress"))
	if len(left) != 2 {
		t.Fatalf("in-progress files left: %v (want the live run's and the other sink's)", left)
	}
	for _, f := range left {
		if strings.Contains(f, dead.s.id) {
			t.Fatalf("the dead run's file %s is left", f)
		}
	}
	s.s.Close()
	alive.s.Close()
	other.s.Close()
}

func newTxSinkOwned(t *testing.T, path, owner string) *txSink {
	t.Helper()
	opts := connector.Options{"connector": "filesystem", "path": path, "format": "json"}
	s, err := New().CreateSink(connector.Table{Name: "out", Schema: bidSchema(), Options: opts}, env(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.(*Sink).Restore(context.Background(), connector.SinkRestore{Owner: owner, Checkpointed: true}); err != nil {
		t.Fatal(err)
	}
	return &txSink{t, s.(*Sink)}
}
