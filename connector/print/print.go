package print

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/types"
)

// Factory builds print sinks.
type Factory struct {
	// Stderr receives the output of tables with 'standard-error' = 'true';
	// nil means os.Stderr.
	Stderr io.Writer
}

// New returns the print connector factory.
func New() Factory { return Factory{} }

// Name implements connector.Factory.
func (Factory) Name() string { return "print" }

// CreateSink implements connector.SinkFactory.
func (f Factory) CreateSink(t connector.Table, env connector.Env) (connector.Sink, error) {
	if err := connector.RejectMetadata("print", t); err != nil {
		return nil, err
	}
	if err := t.Options.CheckKnown("print", []string{"connector", "print-identifier", "standard-error", "sink.parallelism"}); err != nil {
		return nil, err
	}
	stderr, err := t.Options.Bool("standard-error", false)
	if err != nil {
		return nil, err
	}
	if _, err := t.Options.Int("sink.parallelism", 1); err != nil {
		return nil, err
	}
	w := env.Stdout
	if stderr {
		w = f.Stderr
		if w == nil {
			w = os.Stderr
		}
	}
	if w == nil {
		return nil, errors.New("print: no output writer (Env.Stdout is nil)")
	}
	s := &Sink{w: w, types: t.Schema.Types(), loc: env.Location}
	if id, ok := t.Options["print-identifier"]; ok {
		s.prefix = id + "> "
	}
	return s, nil
}

// Sink prints rows. It is safe for concurrent use.
type Sink struct {
	w      io.Writer
	prefix string
	types  []types.Type
	loc    *time.Location // TIMESTAMP_LTZ values are shown in it

	mu  sync.Mutex
	buf []byte
}

// AppendRow appends the printed form of r (without a line break) to dst.
func (s *Sink) AppendRow(dst []byte, r types.Row) []byte {
	dst = append(dst, s.prefix...)
	dst = append(dst, r.Kind.String()...)
	dst = append(dst, '[')
	for i, v := range r.Vals {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		if v.IsNull() {
			dst = append(dst, "null"...)
			continue
		}
		var t types.Type
		if i < len(s.types) {
			t = s.types[i]
		}
		dst = types.AppendValueIn(dst, v, t, s.loc)
	}
	return append(dst, ']')
}

// Write implements connector.Sink.
func (s *Sink) Write(_ context.Context, b *types.Batch) error {
	if b.Len() == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = s.buf[:0]
	for _, r := range b.Rows {
		s.buf = append(s.AppendRow(s.buf, r), '\n')
	}
	if _, err := s.w.Write(s.buf); err != nil {
		return fmt.Errorf("print: cannot write: %w", err)
	}
	return nil
}

// Flush implements connector.Sink; output is not buffered.
func (s *Sink) Flush(context.Context) error { return nil }

// Close implements connector.Sink.
func (s *Sink) Close() error { return nil }
