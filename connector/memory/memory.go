// Package memory is a source of rows held in memory, partition by partition:
// the input of VALUES and of Go programs and tests that feed a job directly.
// A bounded source ends when its rows are read; an unbounded one waits for
// more rows from Push until Close.
package memory

import (
	"context"
	"io"
	"sync"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/types"
)

// Source holds rows per partition.
type Source struct {
	mu      sync.Mutex
	cond    chan struct{} // closed and replaced on every Push/Close
	parts   [][]types.Row
	closed  []bool
	bounded bool
}

// NewBounded returns a bounded source whose partitions hold the given rows.
// Each row's Origin is set to its partition and 1-based position.
func NewBounded(parts ...[]types.Row) *Source {
	s := &Source{parts: make([][]types.Row, len(parts)), closed: make([]bool, len(parts)), bounded: true,
		cond: make(chan struct{})}
	for p, rows := range parts {
		for i, r := range rows {
			r.Origin = types.Origin{Part: int32(p), Offset: int64(i + 1)}
			s.parts[p] = append(s.parts[p], r)
		}
		s.closed[p] = true
	}
	return s
}

// NewUnbounded returns an unbounded source with n empty partitions.
func NewUnbounded(n int) *Source {
	return &Source{parts: make([][]types.Row, n), closed: make([]bool, n), cond: make(chan struct{})}
}

// Push appends rows to partition p of an unbounded source.
func (s *Source) Push(p int, rows ...types.Row) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range rows {
		r.Origin = types.Origin{Part: int32(p), Offset: int64(len(s.parts[p]) + 1)}
		s.parts[p] = append(s.parts[p], r)
	}
	close(s.cond)
	s.cond = make(chan struct{})
}

// ClosePartition ends partition p: readers return io.EOF once it is read.
func (s *Source) ClosePartition(p int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed[p] = true
	close(s.cond)
	s.cond = make(chan struct{})
}

// Partitions implements connector.Source.
func (s *Source) Partitions() int { return len(s.parts) }

// Bounded implements connector.Source.
func (s *Source) Bounded() bool { return s.bounded }

// Open implements connector.Source.
func (s *Source) Open(ctx context.Context, p int) (connector.Reader, error) {
	return &reader{s: s, p: p}, nil
}

type reader struct {
	s   *Source
	p   int
	pos int
}

// idleWait is how long an unbounded reader waits for rows before returning
// empty-handed, per the connector.Reader contract.
const idleWait = 50 * time.Millisecond

func (r *reader) Read(ctx context.Context, b *types.Batch, max int) error {
	s := r.s
	s.mu.Lock()
	rows, closed, cond := s.parts[r.p], s.closed[r.p], s.cond
	s.mu.Unlock()
	if r.pos >= len(rows) {
		if closed {
			return io.EOF
		}
		t := time.NewTimer(idleWait)
		defer t.Stop()
		select {
		case <-cond:
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
		return nil
	}
	n := min(max, len(rows)-r.pos)
	for _, row := range rows[r.pos : r.pos+n] {
		b.Append(row)
	}
	r.pos += n
	return nil
}

func (r *reader) Close() error { return nil }
