package lsm

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sluicesql/sluice/state"
)

// Writes become durable only with Commit, together with the positions;
// a reopened directory holds the last committed checkpoint exactly.
func TestCommitIsAtomic(t *testing.T) {
	dir := t.TempDir()
	b, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := b.Store("job/agg/0")
	if err := s.Put([]byte("a"), []byte("1")); err != nil {
		t.Fatal(err)
	}
	s.Offsets().Admit(3, 42)
	if err := s.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if v, ok, _ := s.Get([]byte("a")); !ok || string(v) != "1" {
		t.Fatalf("pending write not visible to its store: %q %v", v, ok)
	}
	if err := b.Commit("", map[string]int64{"job/source-1/0": 42}); err != nil {
		t.Fatal(err)
	}
	// Written after the commit: must be gone after a restart.
	if err := s.Put([]byte("a"), []byte("2")); err != nil {
		t.Fatal(err)
	}
	if err := s.Put([]byte("b"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}

	b, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	pos, err := b.Positions("")
	if err != nil || pos["job/source-1/0"] != 42 || len(pos) != 1 {
		t.Fatalf("positions %v, %v", pos, err)
	}
	s, _ = b.Store("job/agg/0")
	if v, ok, _ := s.Get([]byte("a")); !ok || string(v) != "1" {
		t.Errorf("a = %q %v after restart, want the committed 1", v, ok)
	}
	if _, ok, _ := s.Get([]byte("b")); ok {
		t.Error("uncommitted b survived the restart")
	}
	if off, ok := s.Offsets().Get(3); !ok || off != 42 {
		t.Errorf("offsets not restored: %d %v", off, ok)
	}
	var keys []string
	if err := s.Scan(nil, func(k, v []byte) bool { keys = append(keys, string(k)); return true }); err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || keys[0] != "a" {
		t.Errorf("scan = %v", keys)
	}
	// Stores are isolated by ID, even when one ID prefixes another.
	other, _ := b.Store("job/agg/0x")
	if _, ok, _ := other.Get([]byte("a")); ok {
		t.Error("store job/agg/0x sees job/agg/0's key")
	}
}

// BenchmarkCommit measures a checkpoint of 100 small writes: a synced
// Pebble commit, the marker's write and sync, and the free-space check.
func BenchmarkCommit(b *testing.B) {
	be, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	s, _ := be.Store("job/agg/0")
	key, val := make([]byte, 8), make([]byte, 32)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		for j := 0; j < 100; j++ {
			key[0], key[1] = byte(j), byte(i)
			s.Put(key, val)
		}
		s.Checkpoint()
		if err := be.Commit("job", map[string]int64{"job/src/0": int64(i)}); err != nil {
			b.Fatal(err)
		}
	}
}

// Commits that come while one is written are written together, in one
// synced batch, and each returns once its positions and the stores'
// writes made before it are durable.
func TestGroupCommit(t *testing.T) {
	dir := t.TempDir()
	b, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	const n = 20
	stores := make([]state.Store, n)
	for i := range stores {
		if stores[i], err = b.Store(fmt.Sprintf("job%d/agg/0", i)); err != nil {
			t.Fatal(err)
		}
	}
	seq := b.seq
	// The stores' lock held: the first commit leads and waits for it; the
	// others queue behind it.
	b.mu.Lock()
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i > 0 {
				// In order: commit i finds i-1 queued.
				for {
					b.group.Lock()
					queued := len(b.group.queue)
					b.group.Unlock()
					if queued == i-1 {
						break
					}
					time.Sleep(time.Millisecond)
				}
			}
			errs <- b.Commit(fmt.Sprintf("job%d", i), map[string]int64{fmt.Sprintf("job%d/source/0", i): int64(100 + i)})
		}()
		if i == 0 {
			for {
				b.group.Lock()
				leading := b.group.leading && len(b.group.queue) == 0
				b.group.Unlock()
				if leading {
					break
				}
				time.Sleep(time.Millisecond)
			}
		}
	}
	for {
		b.group.Lock()
		queued := len(b.group.queue)
		b.group.Unlock()
		if queued == n-1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	// Written while the commits wait (the lock is ours): durable with
	// their group's write.
	for i := 1; i < n; i++ {
		b.pending.Set(append(storePrefix(fmt.Sprintf("job%d/agg/0", i)), 'k'), []byte{byte(i)}, nil)
	}
	b.mu.Unlock()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := b.seq - seq; got != 2 {
		t.Errorf("%d commits made %d synced writes, want 2 (the leader's, then the others' together)", n, got)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for i := range n {
		pos, err := b.Positions(fmt.Sprintf("job%d", i))
		if err != nil || pos[fmt.Sprintf("job%d/source/0", i)] != int64(100+i) {
			t.Errorf("job%d: positions %v, %v", i, pos, err)
		}
		if i == 0 {
			continue
		}
		s, _ := b.Store(fmt.Sprintf("job%d/agg/0", i))
		if v, ok, _ := s.Get([]byte("k")); !ok || v[0] != byte(i) {
			t.Errorf("job%d: its write before its commit is not durable: %v %v", i, v, ok)
		}
	}
}

// Drop of a job removes its stores, offsets and positions and nothing
// else; Drop("") removes every job's (in one range deletion).
func TestDrop(t *testing.T) {
	dir := t.TempDir()
	b, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a/agg/0", "ab/agg/0", "b/join/1"} {
		s, _ := b.Store(id)
		for _, k := range []string{"x", "y"} {
			if err := s.Put([]byte(k), []byte(id)); err != nil {
				t.Fatal(err)
			}
		}
		s.Offsets().Admit(1, 7)
		if err := s.Checkpoint(); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Commit("", map[string]int64{"a/src/0": 1, "ab/src/0": 2, "b/src/0": 3}); err != nil {
		t.Fatal(err)
	}
	entries := func(id string) int {
		s, _ := b.Store(id)
		n := 0
		if err := s.Scan(nil, func(k, v []byte) bool { n++; return true }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if err := b.Drop("a"); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit("", nil); err != nil {
		t.Fatal(err)
	}
	if got := []int{entries("a/agg/0"), entries("ab/agg/0"), entries("b/join/1")}; got[0] != 0 || got[1] != 2 || got[2] != 2 {
		t.Errorf("after Drop(a): entries %v", got)
	}
	if pos, _ := b.Positions(""); len(pos) != 2 || pos["ab/src/0"] != 2 {
		t.Errorf("after Drop(a): positions %v", pos)
	}
	if err := b.Drop(""); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit("", nil); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if b, err = Open(dir); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if got := []int{entries("a/agg/0"), entries("ab/agg/0"), entries("b/join/1")}; got[0]+got[1]+got[2] != 0 {
		t.Errorf("after Drop(\"\"): entries %v", got)
	}
	if pos, _ := b.Positions(""); len(pos) != 0 {
		t.Errorf("after Drop(\"\"): positions %v", pos)
	}
	s, _ := b.Store("b/join/1")
	if _, ok := s.Offsets().Get(1); ok {
		t.Error("after Drop(\"\"): an offsets table is left")
	}
}
