package blackhole

import (
	"context"
	"sync/atomic"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/types"
)

// Factory builds blackhole sinks.
type Factory struct{}

// New returns the blackhole connector factory.
func New() Factory { return Factory{} }

// Name implements connector.Factory.
func (Factory) Name() string { return "blackhole" }

// CreateSink implements connector.SinkFactory.
func (Factory) CreateSink(t connector.Table, _ connector.Env) (connector.Sink, error) {
	if err := t.Options.CheckKnown("blackhole", []string{"connector"}); err != nil {
		return nil, err
	}
	return &Sink{}, nil
}

// Sink discards rows, counting them.
type Sink struct {
	rows atomic.Int64
}

// Rows returns the number of rows written so far.
func (s *Sink) Rows() int64 { return s.rows.Load() }

// Write implements connector.Sink.
func (s *Sink) Write(_ context.Context, b *types.Batch) error {
	s.rows.Add(int64(b.Len()))
	return nil
}

// Flush implements connector.Sink.
func (s *Sink) Flush(context.Context) error { return nil }

// Close implements connector.Sink.
func (s *Sink) Close() error { return nil }
