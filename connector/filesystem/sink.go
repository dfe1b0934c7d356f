package filesystem

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/types"
)

// The filesystem sink is exactly-once with the job's checkpoints, as
// Flink's file sink is: rows go to in-progress files, hidden (their names
// begin with a dot, which readers of the directory skip), which become
// visible only when the checkpoint that covers them has committed.
//
//   - A path that is a directory receives part files,
//     part-<sink>-<n>.<format>, where <sink> names this sink (chosen at
//     its first run and kept in its state) and <n> counts its files. Rows
//     go to the in-progress file .part-<sink>-<n>.<format>.inprogress; at
//     a checkpoint the file is synced and, when the rolling policy says
//     so (its size, its age) or the input ends, it is rolled: the commit
//     of that checkpoint renames it to its final name. A file not rolled
//     goes on across checkpoints; the state records how long it was.
//   - Any other path is one output file, extended at every commit: the
//     rows of each checkpoint go to a hidden segment file beside it,
//     .<name>.<sink>-<n>.inprogress, which the commit appends to the file
//     and removes. The state records how long the file was before each
//     pending segment, so that an append cut short by a crash is cut
//     back and made again. One sink at a time writes such a file: it holds
//     an exclusive lock on .<name>.lock (another INSERT into it, in this
//     job or another process, fails).
//
// A job restarted from a checkpoint finishes the commits that checkpoint
// left pending, cuts its in-progress file back to the length the
// checkpoint recorded, and removes the in-progress files it wrote after
// it. Nothing committed is ever truncated or removed; a restarted job
// without state (no 'state.dir') appends to what is there, as Flink's
// INSERT INTO does. In a job without checkpoints the sink commits by
// itself every commitEvery, and at the end of its input.

// writeBufferSize is the sink's write buffer.
const writeBufferSize = 256 << 10

// commitEvery is how often a sink in a job without checkpoints makes
// what it wrote visible.
const commitEvery = time.Second

// Rolling policy options, with Flink's names and defaults.
const (
	rollFileSizeOption = "sink.rolling-policy.file-size"
	rollIntervalOption = "sink.rolling-policy.rollover-interval"
	rollCheckOption    = "sink.rolling-policy.check-interval"
)

// sinkOptions are the options of a filesystem sink.
var sinkOptions = []string{rollFileSizeOption, rollIntervalOption, rollCheckOption}

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
	s := &Sink{table: t.Name, fmtName: c.fmtName, enc: enc, changelog: format.IsChangelog(c.format), now: env.Now}
	if s.now == nil {
		s.now = func() int64 { return time.Now().UnixMicro() }
	}
	size, err := t.Options.Bytes(rollFileSizeOption, 128<<20)
	if err != nil {
		return nil, err
	}
	if size <= 0 {
		return nil, fmt.Errorf("option '%s' must be positive", rollFileSizeOption)
	}
	interval, err := t.Options.Duration(rollIntervalOption, 30*time.Minute)
	if err != nil {
		return nil, err
	}
	if interval <= 0 {
		return nil, fmt.Errorf("option '%s' must be positive", rollIntervalOption)
	}
	if _, err := t.Options.Duration(rollCheckOption, time.Minute); err != nil {
		return nil, err
	}
	s.rollSize, s.rollAfter = size, interval
	path := c.path
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		s.dir = path
	} else {
		if err == nil && !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("cannot write %s: not a regular file or a directory", c.path)
		}
		s.dir, s.target = filepath.Dir(path), path
		if fi, err := os.Stat(s.dir); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("cannot write %s: its directory %s does not exist", c.path, s.dir)
		}
	}
	return s, nil
}

// Sink writes one formatted record per line, exactly-once with the job's
// checkpoints (see the comment at the top of this file). It is safe for
// concurrent use.
type Sink struct {
	table   string
	fmtName string
	enc     format.Encoder
	// changelog: the format writes rows of every kind.
	changelog bool
	now       func() int64
	rollSize  int64
	rollAfter time.Duration

	// dir is the directory written; target, if set, the one output file
	// in it (else part files go to dir).
	dir, target string

	mu sync.Mutex
	// checkpointed: the job takes checkpoints, which keep this sink's
	// state; without, nothing resumes its files.
	checkpointed bool
	restored     bool
	id           string // names this sink's files; kept in its state
	next         int    // the number of its next file
	cur          *part  // the in-progress file being written, if any
	rolled       []*part
	prepared     []*part // rolled at a Prepare, made visible at the next Commit
	// targetLen is how long the output file will be once everything
	// prepared is committed (one output file only).
	targetLen int64
	lock      *os.File
	closed    bool
	err       error // a sticky write error
}

// part is an in-progress file.
type part struct {
	name    string // its hidden in-progress path
	final   string // the path it is renamed to (part files)
	f       *os.File
	w       *bufio.Writer
	size    int64 // bytes written to it, buffered or not
	synced  int64 // bytes made durable at the last Prepare
	created int64 // processing time it was created
	base    int64 // one output file: its length before this segment
}

// snapshot is the sink's state at a checkpoint.
type snapshot struct {
	ID        string      `json:"id"`
	Next      int         `json:"next"`
	Cur       *savedPart  `json:"cur,omitempty"`
	Prepared  []savedPart `json:"prepared,omitempty"`
	TargetLen int64       `json:"target_len,omitempty"`
}

type savedPart struct {
	Name  string `json:"name"`
	Final string `json:"final,omitempty"`
	Len   int64  `json:"len"`
	Base  int64  `json:"base,omitempty"`
}

// Identity implements connector.Identified: the absolute path written.
func (s *Sink) Identity() string {
	if s.target != "" {
		return "filesystem " + s.target
	}
	return "filesystem " + s.dir
}

// CommitEvery implements connector.SelfCommitting.
func (s *Sink) CommitEvery() time.Duration { return commitEvery }

// Restore implements connector.StatefulSink: see the top of this file.
func (s *Sink) Restore(_ context.Context, state []byte, checkpointed bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.restored {
		return fmt.Errorf("filesystem sink '%s': restored twice", s.table)
	}
	s.restored, s.checkpointed = true, checkpointed
	if s.target != "" {
		if err := s.takeLock(); err != nil {
			return err
		}
	}
	if state == nil {
		var id [6]byte
		if _, err := rand.Read(id[:]); err != nil {
			return fmt.Errorf("filesystem sink '%s': %w", s.table, err)
		}
		s.id = hex.EncodeToString(id[:])
		if s.target != "" {
			fi, err := os.Stat(s.target)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("filesystem sink '%s': cannot read %s: %w", s.table, s.target, err)
			}
			if err == nil {
				s.targetLen = fi.Size()
			}
		}
		return nil
	}
	var snap snapshot
	if err := json.Unmarshal(state, &snap); err != nil || snap.ID == "" {
		return fmt.Errorf("filesystem sink '%s': its saved state is damaged (%v): start the job afresh ('state.start-fresh')", s.table, err)
	}
	s.id, s.next, s.targetLen = snap.ID, snap.Next, snap.TargetLen
	keep := map[string]bool{}
	for _, sp := range snap.Prepared {
		p := &part{name: sp.Name, final: sp.Final, size: sp.Len, synced: sp.Len, base: sp.Base}
		if err := s.commitPart(p); err != nil {
			return err
		}
	}
	if c := snap.Cur; c != nil {
		keep[c.Name] = true
		f, err := os.OpenFile(c.Name, os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("filesystem sink '%s': cannot resume the in-progress file %s of the last checkpoint: %w", s.table, c.Name, err)
		}
		fi, err := f.Stat()
		if err == nil && fi.Size() < c.Len {
			err = fmt.Errorf("it holds %d bytes, the checkpoint recorded %d: it was changed while the job was not running", fi.Size(), c.Len)
		}
		if err == nil {
			err = f.Truncate(c.Len)
		}
		if err == nil {
			_, err = f.Seek(c.Len, io.SeekStart)
		}
		if err != nil {
			f.Close()
			return fmt.Errorf("filesystem sink '%s': cannot resume the in-progress file %s: %w", s.table, c.Name, err)
		}
		s.cur = &part{name: c.Name, final: c.Final, f: f, w: bufio.NewWriterSize(f, writeBufferSize),
			size: c.Len, synced: c.Len, created: s.now()}
	}
	return s.removeStrays(keep)
}

// removeStrays removes this sink's in-progress files that no checkpoint
// covers (written after the one restored), but those in keep.
func (s *Sink) removeStrays(keep map[string]bool) error {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("filesystem sink '%s': cannot list %s: %w", s.table, s.dir, err)
	}
	prefix := s.inProgressPrefix()
	for _, e := range entries {
		name := filepath.Join(s.dir, e.Name())
		if strings.HasPrefix(e.Name(), prefix) && strings.HasSuffix(e.Name(), ".inprogress") && !keep[name] {
			if err := os.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("filesystem sink '%s': cannot remove %s: %w", s.table, name, err)
			}
		}
	}
	return nil
}

// inProgressPrefix begins the names of this sink's in-progress files.
func (s *Sink) inProgressPrefix() string {
	if s.target != "" {
		return "." + filepath.Base(s.target) + "." + s.id + "-"
	}
	return ".part-" + s.id + "-"
}

// takeLock takes the exclusive lock of the output file, released when
// the sink closes (or its process dies).
func (s *Sink) takeLock() error {
	name := filepath.Join(s.dir, "."+filepath.Base(s.target)+".lock")
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("filesystem sink '%s': cannot create the lock file %s: %w", s.table, name, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("filesystem sink '%s': %s is being written by another INSERT (of this job or another); "+
				"one output file takes one writer: write to a directory (a path that is one) to have several", s.table, s.target)
		}
		return fmt.Errorf("filesystem sink '%s': cannot lock %s: %w", s.table, name, err)
	}
	s.lock = f
	return nil
}

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
	if !s.restored {
		s.mu.Unlock()
		err := s.Restore(context.Background(), nil, false)
		s.mu.Lock()
		if err != nil {
			return err
		}
	}
	for _, r := range b.Rows {
		if !r.Kind.IsAccumulate() && !s.changelog {
			return fmt.Errorf("filesystem sink '%s' cannot take updates/deletes (got a %s row): format '%s' is append-only; "+
				"use a changelog format such as 'debezium-json' or make the query append-only", s.table, r.Kind, s.fmtName)
		}
		if s.cur == nil {
			if err := s.open(); err != nil {
				return s.fail(err)
			}
		}
		w := s.cur.w
		// Encode straight into the writer's buffer when it has room.
		buf, err := s.enc.Encode(w.AvailableBuffer(), r)
		if err != nil {
			return fmt.Errorf("filesystem sink '%s': cannot encode row: %w", s.table, err)
		}
		buf = append(buf, '\n')
		if _, err := w.Write(buf); err != nil {
			return s.fail(fmt.Errorf("cannot write %s: %w", s.cur.name, err))
		}
		s.cur.size += int64(len(buf))
		if s.target == "" && s.cur.size >= s.rollSize {
			if err := s.roll(); err != nil {
				return s.fail(err)
			}
		}
	}
	return nil
}

// fail makes err sticky.
func (s *Sink) fail(err error) error {
	s.err = fmt.Errorf("filesystem sink '%s': %w", s.table, err)
	return s.err
}

// open starts a new in-progress file.
func (s *Sink) open() error {
	n := s.next
	s.next++
	p := &part{created: s.now(), base: -1}
	if s.target != "" {
		p.name = filepath.Join(s.dir, s.inProgressPrefix()+strconv.Itoa(n)+".inprogress")
	} else {
		final := "part-" + s.id + "-" + strconv.Itoa(n) + "." + s.fmtName
		p.name = filepath.Join(s.dir, "."+final+".inprogress")
		p.final = filepath.Join(s.dir, final)
	}
	f, err := os.OpenFile(p.name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("cannot create an in-progress file: %w", err)
	}
	p.f, p.w = f, bufio.NewWriterSize(f, writeBufferSize)
	s.cur = p
	return nil
}

// roll ends the current in-progress file: made durable and closed, it is
// made visible by the commit of the next checkpoint.
func (s *Sink) roll() error {
	p := s.cur
	s.cur = nil
	if err := p.w.Flush(); err != nil {
		p.f.Close()
		return fmt.Errorf("cannot write %s: %w", p.name, err)
	}
	if err := p.f.Sync(); err != nil {
		p.f.Close()
		return fmt.Errorf("cannot sync %s: %w", p.name, err)
	}
	if err := p.f.Close(); err != nil {
		return fmt.Errorf("cannot close %s: %w", p.name, err)
	}
	p.f, p.w, p.synced = nil, nil, p.size
	s.rolled = append(s.rolled, p)
	return nil
}

// Prepare implements connector.Committer: at a checkpoint barrier, the
// in-progress file is made durable and, when the rolling policy says so
// (or for one output file, always), rolled.
func (s *Sink) Prepare(context.Context) error { return s.prepare(false) }

// PrepareEnd implements connector.EndPreparer: at the end of the input
// (or a stop) every in-progress file is rolled, to be committed with the
// job's last checkpoint.
func (s *Sink) PrepareEnd(context.Context) error { return s.prepare(true) }

func (s *Sink) prepare(end bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	if p := s.cur; p != nil {
		roll := end || s.target != "" || p.size >= s.rollSize ||
			time.Duration(s.now()-p.created)*time.Microsecond >= s.rollAfter
		if roll {
			if err := s.roll(); err != nil {
				return s.fail(err)
			}
		} else {
			if err := p.w.Flush(); err != nil {
				return s.fail(fmt.Errorf("cannot write %s: %w", p.name, err))
			}
			if err := p.f.Sync(); err != nil {
				return s.fail(fmt.Errorf("cannot sync %s: %w", p.name, err))
			}
			p.synced = p.size
		}
	}
	for _, p := range s.rolled {
		if s.target != "" {
			p.base = s.targetLen
			s.targetLen += p.size
		}
		s.prepared = append(s.prepared, p)
	}
	s.rolled = nil
	return nil
}

// Snapshot implements connector.StatefulSink: the state after Prepare.
func (s *Sink) Snapshot() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := snapshot{ID: s.id, Next: s.next, TargetLen: s.targetLen}
	if p := s.cur; p != nil {
		snap.Cur = &savedPart{Name: p.name, Final: p.final, Len: p.synced}
	}
	for _, p := range s.prepared {
		snap.Prepared = append(snap.Prepared, savedPart{Name: p.name, Final: p.final, Len: p.size, Base: p.base})
	}
	return json.Marshal(snap)
}

// Commit implements connector.Committer: what was prepared becomes
// visible.
func (s *Sink) Commit(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	for len(s.prepared) > 0 {
		if err := s.commitPart(s.prepared[0]); err != nil {
			return s.fail(err)
		}
		s.prepared = s.prepared[1:]
	}
	return nil
}

// commitPart makes a prepared file visible. It is idempotent: a restarted
// job makes again the commits a crash may have cut short.
func (s *Sink) commitPart(p *part) error {
	if s.target == "" {
		err := os.Rename(p.name, p.final)
		if errors.Is(err, os.ErrNotExist) {
			if _, serr := os.Stat(p.final); serr == nil {
				return nil // committed before
			}
			return fmt.Errorf("filesystem sink '%s': the file %s of a completed checkpoint is gone (neither it nor %s exists): "+
				"its rows are lost", s.table, p.name, p.final)
		}
		if err != nil {
			return fmt.Errorf("filesystem sink '%s': cannot commit %s: %w", s.table, p.name, err)
		}
		return syncDir(s.dir)
	}
	seg, err := os.Open(p.name)
	if errors.Is(err, os.ErrNotExist) {
		return nil // appended and removed before
	}
	if err != nil {
		return fmt.Errorf("filesystem sink '%s': cannot commit %s: %w", s.table, p.name, err)
	}
	defer seg.Close()
	out, err := os.OpenFile(s.target, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("filesystem sink '%s': cannot open %s: %w", s.table, s.target, err)
	}
	defer out.Close()
	fi, err := out.Stat()
	if err != nil {
		return fmt.Errorf("filesystem sink '%s': cannot read %s: %w", s.table, s.target, err)
	}
	if fi.Size() < p.base {
		return fmt.Errorf("filesystem sink '%s': %s holds %d bytes, but %d were committed to it: it was truncated or replaced "+
			"while the job was not running; the rows of the segment %s are kept there", s.table, s.target, fi.Size(), p.base, p.name)
	}
	// Cut back an append a crash cut short, then append the segment.
	if err := out.Truncate(p.base); err == nil {
		_, err = out.Seek(p.base, io.SeekStart)
	}
	if err == nil {
		_, err = io.CopyN(out, seg, p.size)
	}
	if err == nil {
		err = out.Sync()
	}
	if err != nil {
		return fmt.Errorf("filesystem sink '%s': cannot append to %s: %w", s.table, s.target, err)
	}
	if err := os.Remove(p.name); err != nil {
		return fmt.Errorf("filesystem sink '%s': cannot remove %s: %w", s.table, p.name, err)
	}
	return nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("cannot sync directory %s: %w", dir, err)
	}
	return nil
}

// Flush implements connector.Sink: everything written so far is made
// visible at once (Prepare and Commit; at-least-once, for callers that
// take no checkpoints).
func (s *Sink) Flush(ctx context.Context) error {
	if err := s.prepare(true); err != nil {
		return err
	}
	return s.Commit(ctx)
}

// Close implements connector.Sink. What was not committed stays for a
// restarted job to resume or remove, when the job takes checkpoints; else
// nothing could resume it, and it is removed.
func (s *Sink) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	var err error
	for _, p := range append(append([]*part{s.cur}, s.rolled...), s.prepared...) {
		if p == nil {
			continue
		}
		if p.f != nil {
			if cerr := p.f.Close(); cerr != nil && err == nil {
				err = fmt.Errorf("filesystem sink '%s': cannot close %s: %w", s.table, p.name, cerr)
			}
		}
		if !s.checkpointed {
			os.Remove(p.name)
		}
	}
	if s.lock != nil {
		s.lock.Close() // releases the lock
	}
	return err
}
