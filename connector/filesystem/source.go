package filesystem

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/zeebo/xxh3"

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

// SupportsPartitions implements connector.PartitionedFactory: a table
// PARTITIONED BY columns is laid out as k=v directories.
func (Factory) SupportsPartitions() bool { return true }

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
	path string
	// uri: the path was written as a file: URI (Flink's way), which names
	// a directory.
	uri     bool
	fmtName string
	format  format.Factory
	fmtOpts map[string]string
	// part is the table's partitioning (nil: not PARTITIONED BY).
	part *partitioning
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
	if c.path, c.uri, err = localPath(c.path); err != nil {
		return c, err
	}
	if c.part, err = newPartitioning(t); err != nil {
		return c, err
	}
	if c.fmtName, err = t.Options.Required("format"); err != nil {
		return c, err
	}
	known := append([]string{"connector", "path", "format", maxOpenOption, defaultNameOption}, connector.ErrorPolicyOptions()...)
	known = append(known, lookupOptions...)
	known = append(known, sinkOptions...)
	if err := t.Options.CheckKnown("filesystem", known, c.fmtName+"."); err != nil {
		return c, err
	}
	if env.Formats == nil {
		return c, errors.New("filesystem: no format registry")
	}
	if c.format, err = env.Formats.Lookup(c.fmtName); err != nil {
		return c, err
	}
	c.fmtOpts = t.Options.WithPrefix(c.fmtName + ".")
	if c.part != nil && format.IsChangelog(c.format) {
		return c, fmt.Errorf("a PARTITIONED BY table cannot have changelog format '%s'", c.fmtName)
	}
	return c, nil
}

// recordSchema is the schema of the records in t's files: without the
// partition columns, which live in the directories' names.
func (c config) recordSchema(t connector.Table) types.Schema {
	if c.part == nil {
		return t.Schema
	}
	return c.part.dataSchema(t.Schema)
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
	if _, err := c.format.NewDecoder(c.recordSchema(t), c.fmtOpts); err != nil {
		return nil, err
	}
	var files []string
	var partVals [][]types.Value
	if c.part != nil {
		if fi, err := os.Stat(c.path); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("cannot read path: a PARTITIONED BY table's path must be a directory: %s", c.path)
		}
		if files, err = listPartitioned(c.path, len(c.part.keys)); err != nil {
			return nil, err
		}
		for _, f := range files {
			rel, _ := filepath.Rel(c.path, filepath.Dir(f))
			vals, err := c.part.values(rel)
			if err != nil {
				return nil, err
			}
			partVals = append(partVals, vals)
		}
	} else if files, err = listFiles(c.path); err != nil {
		return nil, err
	}
	policy, err := connector.NewErrorPolicy(t, c.fmtName)
	if err != nil {
		return nil, err
	}
	maxOpen, err := t.Options.Int(maxOpenOption, defaultMaxOpen)
	if err != nil {
		return nil, err
	}
	if maxOpen < 1 || maxOpen > 1<<16 {
		return nil, fmt.Errorf("option '%s' must be between 1 and 65536, got %d", maxOpenOption, maxOpen)
	}
	root := c.path
	if len(files) == 1 && files[0] == c.path {
		root = filepath.Dir(c.path)
	}
	return &Source{cfg: c, table: t, root: root, files: files, partVals: partVals, policy: policy, maxOpen: int(maxOpen)}, nil
}

// maxOpenOption bounds the files of a directory read at once; the others
// wait for one to end.
const maxOpenOption = "source.max-open-files"

// defaultMaxOpen is maxOpenOption's default: enough to keep the cores
// busy, few enough that the read buffers (readBufferSize each) stay small.
const defaultMaxOpen = 16

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

// Source is a filesystem table being read: one partition per file, named
// by its path relative to the table's path (see PartitionName).
type Source struct {
	cfg   config
	table connector.Table
	// root is the directory files are named relative to.
	root  string
	files []string
	// partVals are the partition values of each file (PARTITIONED BY).
	partVals [][]types.Value
	policy   *connector.ErrorPolicy
	maxOpen  int
}

// Partitions implements connector.Source: one per file.
func (s *Source) Partitions() int { return len(s.files) }

// Bounded implements connector.Source: files end.
func (s *Source) Bounded() bool { return true }

// Files returns the files read, one per partition.
func (s *Source) Files() []string { return s.files }

// Identity implements connector.Identified: the absolute path read.
func (s *Source) Identity() string {
	if abs, err := filepath.Abs(s.cfg.path); err == nil {
		return "filesystem " + abs
	}
	return "filesystem " + s.cfg.path
}

// MaxOpen implements connector.OpenLimit.
func (s *Source) MaxOpen() int { return s.maxOpen }

// PartitionName implements connector.NamedPartitions: the file's path
// relative to the table's path (its name, for a file in a directory).
func (s *Source) PartitionName(p int) string {
	if rel, err := filepath.Rel(s.root, s.files[p]); err == nil {
		return filepath.ToSlash(rel)
	}
	return s.files[p]
}

// versionBytes is how much of a file's beginning its version hashes.
const versionBytes = 4096

// PartitionVersion implements connector.NamedPartitions: a file is known by
// its beginning (up to versionBytes): how long it is, and its hash. A file
// that was appended to keeps its beginning; one rewritten with other
// content, in place or replaced, does not. A file renamed over by a copy
// that begins alike (a log shipped again with more lines) is the same
// file, as it should be.
func (s *Source) PartitionVersion(p int) ([]byte, error) {
	n, sum, err := fileHead(s.files[p], versionBytes)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", s.files[p], err)
	}
	v := binary.AppendUvarint(nil, uint64(n))
	return binary.BigEndian.AppendUint64(v, sum), nil
}

// SameVersion implements connector.NamedPartitions: the file still begins
// with the bytes version describes.
func (s *Source) SameVersion(p int, version []byte) bool {
	n, k := binary.Uvarint(version)
	if k <= 0 || len(version) != k+8 || n > versionBytes {
		return false
	}
	got, sum, err := fileHead(s.files[p], int(n))
	return err == nil && got == int(n) && sum == binary.BigEndian.Uint64(version[k:])
}

// fileHead returns how many of the first max bytes of the file at path
// there are (fewer when it is shorter) and their hash.
func fileHead(path string, max int) (int, uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	buf := make([]byte, max)
	n, err := io.ReadFull(f, buf)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return 0, 0, err
	}
	return n, xxh3.Hash(buf[:n]), nil
}

// Skipped returns the malformed records skipped by all readers so far.
func (s *Source) Skipped() int64 { return s.policy.Skipped() }

// OpenAfter implements connector.Resumer: the records whose first line is
// before the one offset names are skipped without being decoded (the
// task drops the rest of what the offset covers).
func (s *Source) OpenAfter(ctx context.Context, p int, offset int64) (connector.Reader, error) {
	rd, err := s.Open(ctx, p)
	if err != nil {
		return nil, err
	}
	r := rd.(*Reader)
	until := offset // the line of the last record read
	if r.changelog != nil {
		until = offset >> 16 // see connector.ChangelogOffset
	}
	for {
		rec, first, err := r.next()
		if err == io.EOF {
			return r, nil
		}
		if err != nil {
			r.Close()
			return nil, err
		}
		if first >= until {
			r.pending, r.pendingFirst, r.hasPending = append(r.pending[:0], rec...), first, true
			return r, nil
		}
	}
}

// Open implements connector.Source.
func (s *Source) Open(_ context.Context, p int) (connector.Reader, error) {
	if p < 0 || p >= len(s.files) {
		return nil, fmt.Errorf("filesystem: partition %d out of range [0, %d)", p, len(s.files))
	}
	dec, err := s.cfg.format.NewDecoder(s.cfg.recordSchema(s.table), s.cfg.fmtOpts)
	if err != nil {
		return nil, err
	}
	if pr, ok := dec.(format.Pruner); ok && s.table.Read != nil && s.cfg.part == nil {
		pr.Prune(s.table.Read[:s.table.Schema.Len()])
	}
	f, err := os.Open(s.files[p])
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", s.table.Name, err)
	}
	s.policy.ReaderOpened()
	r := &Reader{
		src:       s,
		partition: int32(p),
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
	if s.cfg.part != nil {
		r.part = s.cfg.part
		r.partVals = s.partVals[p]
		r.record = make([]types.Value, len(s.cfg.part.data))
	}
	r.skipper, _ = dec.(interface{ SkipRecord([]byte) bool })
	r.joiner, _ = dec.(interface{ Incomplete([]byte) bool })
	return r, nil
}

// Reader reads one file.
type Reader struct {
	src       *Source
	partition int32
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
	// part, for a PARTITIONED BY table, places the decoded record
	// (record) and the file's partition values (partVals) in the row.
	part     *partitioning
	partVals []types.Value
	record   []types.Value

	line    int64 // lines read so far
	long    []byte
	eof     bool
	skipped int64
	closed  bool
	// pending is a record read ahead (by OpenAfter), whose first line is
	// pendingFirst, to be decoded first.
	pending      []byte
	pendingFirst int64
	hasPending   bool
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

// next returns the next record (a line, or several when the format says
// the record goes on: a quoted field holding a line break), skipping lines
// that hold none, and the number of its first line. The slice is valid
// until the next call.
func (r *Reader) next() ([]byte, int64, error) {
	if r.hasPending {
		r.hasPending = false
		return r.pending, r.pendingFirst, nil
	}
	for {
		line, err := r.readLine()
		if err != nil {
			return nil, 0, err
		}
		first := r.line
		if len(line) == 0 && !r.keepEmpty || r.skipper != nil && r.skipper.SkipRecord(line) {
			continue
		}
		if r.joiner != nil && r.joiner.Incomplete(line) {
			if line, err = r.join(line); err != nil {
				return nil, 0, err
			}
		}
		return line, first, nil
	}
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
		line, first, err := r.next()
		if err == io.EOF {
			if n == 0 {
				return io.EOF
			}
			return nil
		}
		if err != nil {
			return err
		}
		if r.changelog != nil {
			before := len(b.Rows)
			if _, err = r.changelog.Decode(b, line, r.partition, first); err == nil {
				n += len(b.Rows) - before
				continue
			}
		} else {
			vals := b.AddRow(types.Insert, types.Origin{Part: r.partition, Offset: first}, r.width)
			if r.part == nil {
				err = r.dec.Decode(line, vals)
			} else {
				clear(r.record)
				if err = r.dec.Decode(line, r.record); err == nil {
					for i, c := range r.part.data {
						vals[c] = r.record[i]
					}
					for i, c := range r.part.cols {
						vals[c] = r.partVals[i]
					}
				}
			}
			if err != nil {
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
	if perr := r.src.policy.ReaderClosed(); err == nil {
		err = perr
	}
	return err
}
