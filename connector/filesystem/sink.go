package filesystem

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/types"
)

// writeBufferSize is the sink's write buffer.
const writeBufferSize = 256 << 10

// CreateSink implements connector.SinkFactory.
func (Factory) CreateSink(t connector.Table, env connector.Env) (connector.Sink, error) {
	c, err := parseConfig(t, env)
	if err != nil {
		return nil, err
	}
	enc, err := c.format.NewEncoder(t.Schema, c.fmtOpts)
	if err != nil {
		return nil, err
	}
	f, err := createOutput(c.path, c.fmtName)
	if err != nil {
		return nil, err
	}
	s := &Sink{table: t.Name, fmtName: c.fmtName, enc: enc, f: f, w: bufio.NewWriterSize(f, writeBufferSize)}
	s.changelog = format.IsChangelog(c.format)
	return s, nil
}

// createOutput creates (or truncates) the file a sink writes: path itself,
// or a new part file when path is a directory.
func createOutput(path, ext string) (*os.File, error) {
	fi, err := os.Stat(path)
	if err != nil || !fi.IsDir() {
		f, err := os.Create(path)
		if err != nil {
			return nil, fmt.Errorf("cannot create output file: %w", err)
		}
		return f, nil
	}
	for n := 0; ; n++ {
		name := filepath.Join(path, "part-"+strconv.Itoa(n)+"."+ext)
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("cannot create output file: %w", err)
		}
	}
}

// Sink writes one formatted record per line to a file. It is safe for
// concurrent use.
type Sink struct {
	table   string
	fmtName string
	enc     format.Encoder
	// changelog: the format writes rows of every kind.
	changelog bool

	mu     sync.Mutex
	f      *os.File
	w      *bufio.Writer
	closed bool
	err    error // a sticky write error
}

// Path returns the file the sink writes.
func (s *Sink) Path() string { return s.f.Name() }

// Write implements connector.Sink.
func (s *Sink) Write(_ context.Context, b *types.Batch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("filesystem sink '%s': write after close", s.table)
	}
	if s.err != nil {
		return s.err
	}
	for _, r := range b.Rows {
		if !r.Kind.IsAccumulate() && !s.changelog {
			return fmt.Errorf("filesystem sink '%s' cannot take updates/deletes (got a %s row): format '%s' is append-only; "+
				"use a changelog format such as 'debezium-json' or make the query append-only", s.table, r.Kind, s.fmtName)
		}
		// Encode straight into the writer's buffer when it has room.
		buf, err := s.enc.Encode(s.w.AvailableBuffer(), r)
		if err != nil {
			return fmt.Errorf("filesystem sink '%s': cannot encode row: %w", s.table, err)
		}
		buf = append(buf, '\n')
		if _, err := s.w.Write(buf); err != nil {
			s.err = fmt.Errorf("filesystem sink '%s': cannot write %s: %w", s.table, s.f.Name(), err)
			return s.err
		}
	}
	return nil
}

// Flush implements connector.Sink: it writes the buffer and syncs the file.
func (s *Sink) Flush(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	return s.flush()
}

func (s *Sink) flush() error {
	if s.err != nil {
		return s.err
	}
	if err := s.w.Flush(); err != nil {
		s.err = fmt.Errorf("filesystem sink '%s': cannot write %s: %w", s.table, s.f.Name(), err)
		return s.err
	}
	if err := s.f.Sync(); err != nil {
		s.err = fmt.Errorf("filesystem sink '%s': cannot sync %s: %w", s.table, s.f.Name(), err)
		return s.err
	}
	return nil
}

// Close implements connector.Sink.
func (s *Sink) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	err := s.flush()
	if cerr := s.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("filesystem sink '%s': cannot close %s: %w", s.table, s.f.Name(), cerr)
	}
	return err
}
