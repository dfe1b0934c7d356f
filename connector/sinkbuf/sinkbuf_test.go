package sinkbuf

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicesql/sluice/types"
)

// store is a keyed table that applies batches as a database would.
type store struct {
	mu      sync.Mutex
	rows    map[int64]string
	batches [][]string // what each write got, as "k=v" or "-k"
	fail    []error    // errors the next writes return, in turn
}

func newStore() *store { return &store{rows: map[int64]string{}} }

func (s *store) write(_ context.Context, batch []Change) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.fail) > 0 {
		err := s.fail[0]
		s.fail = s.fail[1:]
		return err
	}
	var seen []string
	for _, c := range batch {
		k := c.Vals[0].Int()
		if c.Delete {
			delete(s.rows, k)
			seen = append(seen, fmt.Sprintf("-%d", k))
			continue
		}
		s.rows[k] = c.Vals[1].Str()
		seen = append(seen, fmt.Sprintf("%d=%s", k, c.Vals[1].Str()))
	}
	s.batches = append(s.batches, seen)
	return nil
}

func (s *store) snapshot() (map[int64]string, [][]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rows := map[int64]string{}
	for k, v := range s.rows {
		rows[k] = v
	}
	return rows, append([][]string(nil), s.batches...)
}

func add(t *testing.T, b *Buffer, k int64, v string, del bool) {
	t.Helper()
	vals := []types.Value{types.BigIntValue(k), types.StringValue(v)}
	if err := b.Add(context.Background(), types.AppendKey(nil, vals[0]), vals, del); err != nil {
		t.Fatal(err)
	}
}

func TestKeyedReduces(t *testing.T) {
	s := newStore()
	b := New(true, Options{MaxRows: 5}, s.write)
	add(t, b, 1, "a", false)
	add(t, b, 2, "b", false)
	add(t, b, 1, "c", false) // replaces 1=a
	add(t, b, 2, "", true)   // deletes 2
	if b.Pending() != 2 {
		t.Fatalf("pending %d, want 2 (one per key)", b.Pending())
	}
	if _, batches := s.snapshot(); len(batches) != 0 {
		t.Fatalf("written before max-rows: %v", batches)
	}
	add(t, b, 3, "d", false) // the fifth change: written
	rows, batches := s.snapshot()
	if got := fmt.Sprint(batches); got != "[[1=c -2 3=d]]" {
		t.Fatalf("batches %s", got)
	}
	if fmt.Sprint(rows) != "map[1:c 3:d]" {
		t.Fatalf("rows %v", rows)
	}
	// A key deleted, then written again in one buffer, is written.
	add(t, b, 3, "", true)
	add(t, b, 3, "e", false)
	if err := b.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if rows, _ := s.snapshot(); fmt.Sprint(rows) != "map[1:c 3:e]" {
		t.Fatalf("rows %v", rows)
	}
	if err := b.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := b.Add(context.Background(), nil, nil, false); !errors.Is(err, ErrClosed) {
		t.Fatalf("Add after Close: %v", err)
	}
}

func TestAppendKeepsAll(t *testing.T) {
	var got []string
	b := New(false, Options{}, func(_ context.Context, batch []Change) error {
		for _, c := range batch {
			got = append(got, c.Vals[0].Str())
		}
		return nil
	})
	vals := make([]types.Value, 1)
	for _, v := range []string{"x", "y", "x"} {
		vals[0] = types.StringValue(v)
		if err := b.Add(context.Background(), nil, vals, false); err != nil {
			t.Fatal(err)
		}
		vals[0] = types.StringValue("changed") // the buffer copied the row
	}
	if err := b.Close(context.Background()); err != nil { // Close writes
		t.Fatal(err)
	}
	if strings.Join(got, ",") != "x,y,x" {
		t.Fatalf("got %v", got)
	}
}

func TestInterval(t *testing.T) {
	s := newStore()
	b := New(true, Options{Interval: 10 * time.Millisecond}, s.write)
	defer b.Close(context.Background())
	add(t, b, 1, "a", false)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if rows, _ := s.snapshot(); rows[1] == "a" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the interval never wrote the buffer")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if b.Pending() != 0 {
		t.Fatalf("pending %d after the interval's write", b.Pending())
	}
}

func TestRetries(t *testing.T) {
	transient := errors.New("connection reset")
	t.Run("cured", func(t *testing.T) {
		s := newStore()
		s.fail = []error{transient, transient}
		var logged []string
		b := New(true, Options{MaxRetries: 2, Backoff: time.Millisecond, What: "t",
			Log: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }}, s.write)
		add(t, b, 1, "a", false)
		if err := b.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		if rows, _ := s.snapshot(); rows[1] != "a" {
			t.Fatalf("rows %v", rows)
		}
		if w, r := b.Stats(); w != 1 || r != 2 {
			t.Fatalf("writes %d, retries %d", w, r)
		}
		if len(logged) != 2 || !strings.Contains(logged[1], "t: cannot write 1 changes: connection reset; retry 2 of 2") {
			t.Fatalf("log %q", logged)
		}
	})
	t.Run("exhausted", func(t *testing.T) {
		s := newStore()
		s.fail = []error{transient, transient, transient}
		b := New(true, Options{MaxRetries: 2, Backoff: time.Millisecond}, s.write)
		add(t, b, 1, "a", false)
		err := b.Flush(context.Background())
		if !errors.Is(err, transient) || !strings.Contains(err.Error(), "after 2 retries") {
			t.Fatalf("error %v", err)
		}
		// The error sticks, and nothing is written past it.
		if err2 := b.Add(context.Background(), []byte{1}, []types.Value{types.BigIntValue(2), types.StringValue("b")}, false); err2 != err {
			t.Fatalf("Add after the error: %v", err2)
		}
		if err2 := b.Close(context.Background()); err2 != err {
			t.Fatalf("Close after the error: %v", err2)
		}
		if rows, _ := s.snapshot(); len(rows) != 0 {
			t.Fatalf("rows %v", rows)
		}
	})
	t.Run("permanent", func(t *testing.T) {
		s := newStore()
		bad := errors.New("no such table")
		s.fail = []error{fmt.Errorf("wrapped: %w", Permanent(bad))}
		b := New(true, Options{MaxRetries: 5, Backoff: time.Hour}, s.write)
		add(t, b, 1, "a", false)
		if err := b.Flush(context.Background()); !errors.Is(err, bad) || !IsPermanent(err) {
			t.Fatalf("error %v", err)
		}
		if _, r := b.Stats(); r != 0 {
			t.Fatalf("a permanent error was retried %d times", r)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		s := newStore()
		s.fail = []error{transient}
		b := New(true, Options{MaxRetries: 1, Backoff: time.Hour}, s.write)
		add(t, b, 1, "a", false)
		ctx, cancel := context.WithCancel(context.Background())
		go func() { time.Sleep(10 * time.Millisecond); cancel() }()
		if err := b.Flush(ctx); !errors.Is(err, transient) || !strings.Contains(err.Error(), "gave up waiting to retry") {
			t.Fatalf("error %v", err)
		}
	})
}

// TestConcurrent adds from one goroutine while the interval writes from
// another (run with -race): every key ends with its last value.
func TestConcurrent(t *testing.T) {
	s := newStore()
	b := New(true, Options{MaxRows: 7, Interval: time.Millisecond}, s.write)
	want := map[int64]string{}
	for i := range 2000 {
		k := int64(i % 37)
		v := fmt.Sprint(i)
		del := i%11 == 0
		add(t, b, k, v, del)
		if del {
			delete(want, k)
		} else {
			want[k] = v
		}
	}
	if err := b.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	rows, _ := s.snapshot()
	if fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Fatalf("rows\n%v\nwant\n%v", rows, want)
	}
}

// TestHeld: a held buffer writes sealed changes at Commit only.
func TestHeld(t *testing.T) {
	s := newStore()
	b := New(true, Options{MaxRows: 1, Interval: time.Millisecond}, s.write)
	b.Hold()
	ctx := context.Background()
	sealed := func() string {
		var out []string
		b.Sealed(func(c Change) error {
			out = append(out, fmt.Sprintf("%d=%s/%v", c.Vals[0].Int(), c.Vals[1].Str(), c.Delete))
			return nil
		})
		return strings.Join(out, " ")
	}
	add(t, b, 1, "a", false)
	add(t, b, 2, "b", false)
	if err := b.Flush(ctx); err != nil { // writes nothing: Commit does
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond) // no interval either
	if rows, _ := s.snapshot(); len(rows) != 0 {
		t.Fatalf("a held buffer wrote before a commit: %v", rows)
	}
	if err := b.Seal(); err != nil {
		t.Fatal(err)
	}
	add(t, b, 1, "c", false) // after the seal: not in this commit
	if got := sealed(); got != "1=a/false 2=b/false" && got != "2=b/false 1=a/false" {
		t.Fatalf("sealed %s", got)
	}
	// A checkpoint that does not complete: the next seal merges.
	add(t, b, 2, "", true)
	if err := b.Seal(); err != nil {
		t.Fatal(err)
	}
	add(t, b, 3, "d", false) // never sealed: dropped by Close
	if err := b.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if rows, _ := s.snapshot(); fmt.Sprint(rows) != "map[1:c]" {
		t.Fatalf("rows after the commit %v", rows)
	}
	if got := sealed(); got != "" {
		t.Fatalf("sealed after the commit: %s", got)
	}
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if rows, _ := s.snapshot(); fmt.Sprint(rows) != "map[1:c]" {
		t.Fatalf("Close wrote what no commit covered: %v", rows)
	}
}

// TestSnapshotRestore: the sealed changes of a checkpoint, written by the
// job's next run.
func TestSnapshotRestore(t *testing.T) {
	cols := []types.Type{types.BigInt, types.String}
	key := func(dst []byte, vals []types.Value) []byte { return types.AppendKey(dst, vals[0]) }
	s := newStore()
	s.rows[2] = "old"
	b := New(true, Options{}, s.write)
	b.Hold()
	add(t, b, 1, "a", false)
	add(t, b, 2, "", true)
	if err := b.Seal(); err != nil {
		t.Fatal(err)
	}
	add(t, b, 3, "after the barrier", false)
	snap, err := b.Snapshot(cols)
	if err != nil {
		t.Fatal(err)
	}
	b.Close(context.Background()) // a crash before the commit
	if rows, _ := s.snapshot(); fmt.Sprint(rows) != "map[2:old]" {
		t.Fatalf("rows before the restore %v", rows)
	}
	for _, held := range []bool{true, false} {
		r := New(true, Options{}, s.write)
		if held {
			r.Hold()
		}
		if err := r.Restore(context.Background(), snap, cols, key); err != nil {
			t.Fatal(err)
		}
		if rows, _ := s.snapshot(); fmt.Sprint(rows) != "map[1:a]" {
			t.Fatalf("held %v: rows after the restore %v", held, rows)
		}
		if r.Pending() != 0 {
			t.Fatalf("held %v: %d changes left after the restore", held, r.Pending())
		}
	}
	r := New(true, Options{}, s.write)
	if err := r.Restore(context.Background(), []byte{9, 9}, cols, key); err == nil || !strings.Contains(err.Error(), "cannot read the changes its last checkpoint holds") {
		t.Fatalf("a corrupt snapshot: %v", err)
	}
}
