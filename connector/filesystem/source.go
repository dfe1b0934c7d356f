package filesystem

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/types"
)

// Factory builds filesystem sources and sinks.
type Factory struct{}

// New returns the filesystem connector factory.
func New() Factory { return Factory{} }

// Name implements connector.Factory.
func (Factory) Name() string { return "filesystem" }

// ProducesChangelog implements connector.ChangelogSource: a table whose
// format is a changelog format (debezium-json, ...) reads as a changelog.
func (Factory) ProducesChangelog(t connector.Table, env connector.Env) bool {
	return connector.FormatIsChangelog(t, env, "format")
}

// AcceptsChangelog implements connector.ChangelogSink: a table whose format
// is a changelog format takes updates and deletes.
func (Factory) AcceptsChangelog(t connector.Table, env connector.Env) bool {
	return connector.FormatIsChangelog(t, env, "format")
}

// config is what sources and sinks share: the path and the format.
type config struct {
	path    string
	fmtName string
	format  format.Factory
	fmtOpts map[string]string
}

func parseConfig(t connector.Table, env connector.Env) (config, error) {
	var c config
	if err := connector.RejectMetadata("filesystem", t); err != nil {
		return c, err
	}
	var err error
	if c.path, err = t.Options.Required("path"); err != nil {
		return c, err
	}
	if c.fmtName, err = t.Options.Required("format"); err != nil {
		return c, err
	}
	known := append([]string{"connector", "path", "format"}, connector.ErrorPolicyOptions()...)
	known = append(known, lookupOptions...)
	if err := t.Options.CheckKnown("filesystem", known, c.fmtName+".", "sink.rolling-policy."); err != nil {
		return c, err
	}
	if env.Formats == nil {
		return c, errors.New("filesystem: no format registry")
	}
	if c.format, err = env.Formats.Lookup(c.fmtName); err != nil {
		return c, err
	}
	c.fmtOpts = t.Options.WithPrefix(c.fmtName + ".")
	return c, nil
}

// readBufferSize is the read buffer of each partition; lines longer than
// it are still read whole.
const readBufferSize = 256 << 10

// maxRecord bounds a record made of several lines (a csv quoted field with
// line breaks), so that a stray quote cannot swallow a whole file.
const maxRecord = 16 << 20

// CreateSource implements connector.SourceFactory.
func (Factory) CreateSource(t connector.Table, env connector.Env) (connector.Source, error) {
	c, err := parseConfig(t, env)
	if err != nil {
		return nil, err
	}
	// Build one decoder now so that bad format options fail early.
	if _, err := c.format.NewDecoder(t.Schema, c.fmtOpts); err != nil {
		return nil, err
	}
	files, err := listFiles(c.path)
	if err != nil {
		return nil, err
	}
	policy, err := connector.NewErrorPolicy(t, c.fmtName)
	if err != nil {
		return nil, err
	}
	return &Source{cfg: c, table: t, files: files, policy: policy}, nil
}

// listFiles returns the files a path stands for.
func listFiles(path string) ([]string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read path: %w", err)
	}
	if !fi.IsDir() {
		return []string{path}, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("cannot list directory: %w", err)
	}
	var files []string
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			continue
		}
		full := filepath.Join(path, name)
		if fi, err := os.Stat(full); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		files = append(files, full)
	}
	sort.Strings(files)
	return files, nil
}

// Source is a filesystem table being read.
type Source struct {
	cfg    config
	table  connector.Table
	files  []string
	policy *connector.ErrorPolicy

	mu   sync.Mutex
	open int // open readers; the policy's dead-letter file closes with the last
}

// Partitions implements connector.Source: one per file.
func (s *Source) Partitions() int { return len(s.files) }

// Bounded implements connector.Source: files end.
func (s *Source) Bounded() bool { return true }

// Files returns the files read, one per partition.
func (s *Source) Files() []string { return s.files }

// Skipped returns the malformed records skipped by all readers so far.
func (s *Source) Skipped() int64 { return s.policy.Skipped() }

// Open implements connector.Source.
func (s *Source) Open(_ context.Context, p int) (connector.Reader, error) {
	if p < 0 || p >= len(s.files) {
		return nil, fmt.Errorf("filesystem: partition %d out of range [0, %d)", p, len(s.files))
	}
	dec, err := s.cfg.format.NewDecoder(s.table.Schema, s.cfg.fmtOpts)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(s.files[p])
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", s.table.Name, err)
	}
	s.mu.Lock()
	s.open++
	s.mu.Unlock()
	r := &Reader{
		src:       s,
		part:      int32(p),
		name:      s.files[p],
		f:         f,
		br:        bufio.NewReaderSize(f, readBufferSize),
		dec:       dec,
		width:     s.table.Schema.Len(),
		keepEmpty: s.cfg.fmtName == "raw",
	}
	if cd, ok := dec.(format.ChangelogDecoder); ok {
		r.changelog = connector.NewChangelogRows(cd, r.width, r.width)
	}
	r.skipper, _ = dec.(interface{ SkipRecord([]byte) bool })
	r.joiner, _ = dec.(interface{ Incomplete([]byte) bool })
	return r, nil
}

// Reader reads one file.
type Reader struct {
	src       *Source
	part      int32
	name      string
	f         *os.File
	br        *bufio.Reader
	dec       format.Decoder
	width     int
	keepEmpty bool
	skipper   interface{ SkipRecord([]byte) bool }
	joiner    interface{ Incomplete([]byte) bool }
	// changelog decodes the records of a changelog format, each into
	// any number of rows whose origins number the rows of the line (see
	// connector.ChangelogOffset).
	changelog *connector.ChangelogRows

	line    int64 // lines read so far
	long    []byte
	eof     bool
	skipped int64
	closed  bool
}

// Skipped implements connector.Stats for this partition.
func (r *Reader) Skipped() int64 { return r.skipped }

// readLine returns the next line without its line break. The slice is
// valid until the next call.
func (r *Reader) readLine() ([]byte, error) {
	if r.eof {
		return nil, io.EOF
	}
	line, err := r.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		r.long = append(r.long[:0], line...)
		for err == bufio.ErrBufferFull {
			line, err = r.br.ReadSlice('\n')
			r.long = append(r.long, line...)
		}
		line = r.long
	}
	if err == io.EOF {
		r.eof = true
		if len(line) == 0 {
			return nil, io.EOF
		}
	} else if err != nil {
		return nil, fmt.Errorf("source %s: cannot read %s: %w", r.src.table.Name, r.name, err)
	}
	r.line++
	line = bytes.TrimSuffix(line, []byte{'\n'})
	return bytes.TrimSuffix(line, []byte{'\r'}), nil
}

// Read implements connector.Reader.
func (r *Reader) Read(ctx context.Context, b *types.Batch, max int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if r.closed {
		return errors.New("filesystem: read from a closed reader")
	}
	n := 0
	for n < max {
		line, err := r.readLine()
		if err == io.EOF {
			if n == 0 {
				return io.EOF
			}
			return nil
		}
		if err != nil {
			return err
		}
		first := r.line
		if len(line) == 0 && !r.keepEmpty || r.skipper != nil && r.skipper.SkipRecord(line) {
			continue
		}
		if r.joiner != nil && r.joiner.Incomplete(line) {
			if line, err = r.join(line); err != nil {
				return err
			}
		}
		if r.changelog != nil {
			before := len(b.Rows)
			if _, err = r.changelog.Decode(b, line, r.part, first); err == nil {
				n += len(b.Rows) - before
				continue
			}
		} else {
			vals := b.AddRow(types.Insert, types.Origin{Part: r.part, Offset: first}, r.width)
			if err = r.dec.Decode(line, vals); err != nil {
				b.Rows = b.Rows[:len(b.Rows)-1]
				clear(vals)
			}
		}
		if err != nil {
			if herr := r.src.policy.Handle(r.name+":"+strconv.FormatInt(first, 10), line, err); herr != nil {
				return herr
			}
			r.skipped++
			continue
		}
		n++
	}
	return nil
}

// join appends following lines to line while the format says the record
// goes on (a quoted field holding a line break). A format that can tell
// from each new line alone (Continues, after the Incomplete that found
// line incomplete) is not asked about the whole record again after every
// line, which is quadratic in the lines a stray quote swallows.
func (r *Reader) join(line []byte) ([]byte, error) {
	rec := append([]byte(nil), line...)
	cont, incremental := r.joiner.(interface{ Continues(line []byte) bool })
	for more := true; more && len(rec) < maxRecord; {
		next, err := r.readLine()
		if err == io.EOF {
			break // the decoder reports the unterminated field
		}
		if err != nil {
			return nil, err
		}
		rec = append(rec, '\n')
		rec = append(rec, next...)
		if incremental {
			more = cont.Continues(next)
		} else {
			more = r.joiner.Incomplete(rec)
		}
	}
	return rec, nil
}

// Close implements connector.Reader.
func (r *Reader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	err := r.f.Close()
	s := r.src
	s.mu.Lock()
	s.open--
	last := s.open == 0
	s.mu.Unlock()
	if last {
		if perr := s.policy.Close(); err == nil {
			err = perr
		}
	}
	return err
}
