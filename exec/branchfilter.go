package exec

import "github.com/sluicesql/sluice/types"

// BranchFilter evaluates the filters of several branches of one trunk
// together (see Stage.Filter): the WHERE clauses of many queries over one
// source, as a rule set is. What each branch keeps of a batch is exactly
// what its own filter would keep, in the same order.
type BranchFilter interface {
	// Select appends to sel.Rows[r] the index of every row of b that the
	// filter of rule r keeps, in row order, and lists in sel.Touched the
	// rules it appended to. sel is reset by the caller.
	Select(b *types.Batch, sel *Selection) error
	// Close releases what the filter holds.
	Close()
}

// Selection is what a BranchFilter kept of one batch.
type Selection struct {
	// Rows holds, per rule, the indexes of the rows it keeps.
	Rows [][]int32
	// Touched lists the rules with rows, each once, in the order they got
	// their first.
	Touched []int32
}

// Add records that rule r keeps row i. Rows of one rule must be added in
// increasing order.
func (s *Selection) Add(r int, i int32) {
	if len(s.Rows[r]) == 0 {
		s.Touched = append(s.Touched, int32(r))
	}
	s.Rows[r] = append(s.Rows[r], i)
}

// Reset forgets the rows of the last batch, keeping the memory of the
// rules that had some.
func (s *Selection) Reset() {
	for _, r := range s.Touched {
		s.Rows[r] = s.Rows[r][:0]
	}
	s.Touched = s.Touched[:0]
}
