package metricstore

import (
	"fmt"
	"maps"
	"slices"
)

// evictRound bounds the records one eviction step moves under one hold
// of a group's lock, so that readers wait little.
const evictRound = 1024

// maybeEvict moves records out of memory, those of the keys not written
// for longest first (each group's oldest chunk), until the records take
// 7/8 of the budget, when they take more than all of it. One eviction
// runs at a time; a commit that finds one running goes on without
// waiting. A key read from the spill comes back into memory at the next
// commit (promoteRead), so keys read often stay there too.
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
	moved := 0
	for s.hotBytes.Load() > target && !s.spillFailed.Load() {
		progress := false
		for _, g := range groups {
			n := g.evict()
			moved += n
			progress = progress || n > 0
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

// evict moves up to evictRound of g's oldest records to the spill, and
// returns how many it moved.
func (g *group) evict() int {
	g.commitMu.Lock()
	defer g.commitMu.Unlock()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gone != nil {
		return 0
	}
	if g.spillStore == nil {
		g.spillID = fmt.Sprintf("mg%d", g.s.spillID.Add(1))
		st, err := g.s.spill.Store(g.spillID + "/values")
		if err != nil {
			g.s.spillFailure(err)
			g.spillID = ""
			return 0
		}
		g.spillStore = st
	}
	n, err := g.t.evict(evictRound, g.spillStore.Put)
	if err != nil {
		g.s.spillFailure(err)
	}
	g.spilled += n
	g.account()
	return n
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
