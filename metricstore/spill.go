package metricstore

import (
	"fmt"
	"maps"
	"slices"
)

// evictRound bounds the entries one eviction step looks at under one
// hold of a group's lock, so that readers wait little.
const evictRound = 4096

// maybeEvict moves records out of memory, least recently used first,
// until they take 7/8 of the budget, when they take more than all of
// it. One eviction runs at a time; a commit that finds one running goes
// on without waiting.
func (s *Store) maybeEvict() {
	budget := s.opts.MemoryBudget
	if s.spill == nil || s.spillFailed.Load() || s.hotBytes.Load() <= budget {
		return
	}
	if !s.spillMu.TryLock() {
		return
	}
	defer s.spillMu.Unlock()
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return
	}
	groups := slices.Collect(maps.Values(s.groups))
	s.mu.RUnlock()
	target := budget - budget/8
	// The clock hand clears the reference bits it passes and moves the
	// entries without one: at most about three sweeps of everything.
	limit := 0
	for _, g := range groups {
		g.mu.RLock()
		limit += 3 * len(g.hot)
		g.mu.RUnlock()
	}
	moved, looked := 0, 0
	for looked < limit && s.hotBytes.Load() > target && !s.spillFailed.Load() {
		progress := false
		for _, g := range groups {
			n, m := g.evict(target)
			moved, looked = moved+n, looked+m
			progress = progress || m > 0
			if s.hotBytes.Load() <= target {
				break
			}
		}
		if !progress {
			break
		}
	}
	if moved == 0 {
		return
	}
	// Until this commit the moved records sit in the backend's pending
	// batch (readable, but in memory): the commit writes them out.
	if err := s.spill.Commit("", nil); err != nil {
		s.spillFailure(err)
	}
}

// evict moves one round of g's records to the spill, and returns how
// many it moved and how many it looked at.
func (g *group) evict(target int64) (moved, looked int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gone != nil {
		return 0, 0
	}
	if g.spillStore == nil {
		g.spillID = fmt.Sprintf("mg%d", g.s.spillID.Add(1))
		st, err := g.s.spill.Store(g.spillID + "/values")
		if err != nil {
			g.s.spillFailure(err)
			g.spillID = ""
			return 0, 0
		}
		g.spillStore = st
	}
	for k, e := range g.hot {
		if looked >= evictRound || g.s.hotBytes.Load() <= target {
			break
		}
		looked++
		if e.ref.Load() {
			e.ref.Store(false)
			continue
		}
		if err := g.spillStore.Put([]byte(k), e.rec); err != nil {
			g.s.spillFailure(err)
			break
		}
		delete(g.hot, k)
		n := entrySize(k, e.rec)
		g.hotBytes -= n
		g.s.hotBytes.Add(-n)
		g.spilled++
		moved++
	}
	return moved, looked
}

// dropSpill removes a group's spilled records (durable with the spill's
// next commit, which does not matter: the directory is emptied at the
// next Open).
func (s *Store) dropSpill(id string) error {
	if err := s.spill.Drop(id); err != nil {
		s.spillFailure(err)
		return fmt.Errorf("cannot drop the spilled values: %w", err)
	}
	return nil
}

// spillFailure records that the spill failed: nothing more moves out of
// memory. The records already there can no longer be read: reads of
// their keys fail.
func (s *Store) spillFailure(err error) {
	if s.spillFailed.CompareAndSwap(false, true) {
		s.logf("metric store: the spill directory %s failed, metric values stay in memory from now on: %v", s.opts.Dir, err)
	}
}
