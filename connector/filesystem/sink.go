package filesystem

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/expr"
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
// A table PARTITIONED BY columns writes part files into partition
// directories (see partition.go), an in-progress file per partition; with
// 'sink.partition-commit.policy.kind' = 'success-file', a partition is
// committed (an empty _SUCCESS file written in it) once its trigger says so,
// after the commit of a checkpoint: 'process-time' (the default), once
// 'sink.partition-commit.delay' has passed since the sink first wrote into
// it; 'partition-time', once the watermark has passed the partition's time
// (read from its values by 'partition.time-extractor.*') plus the delay.
// At the end of the input every partition written is committed. The
// partitions waiting for their commit are in the sink's state.
//
// A job restarted from a checkpoint finishes the commits that checkpoint
// left pending, cuts its in-progress file back to the length the
// checkpoint recorded, and removes the in-progress files it wrote after
// it. Nothing committed is ever truncated or removed; a restarted job
// without state (no 'state.dir') appends to what is there, as Flink's
// INSERT INTO does. In a job without checkpoints the sink commits by
// itself every commitEvery, and at the end of its input.

// writeBufferSize is the write buffer of each in-progress file.
const writeBufferSize = 256 << 10

// commitEvery is how often a sink in a job without checkpoints makes
// what it wrote visible.
const commitEvery = time.Second

// Options of the sink, with Flink's names and defaults.
const (
	rollFileSizeOption  = "sink.rolling-policy.file-size"
	rollIntervalOption  = "sink.rolling-policy.rollover-interval"
	rollCheckOption     = "sink.rolling-policy.check-interval"
	commitTriggerOption = "sink.partition-commit.trigger"
	commitDelayOption   = "sink.partition-commit.delay"
	commitPolicyOption  = "sink.partition-commit.policy.kind"
	successFileOption   = "sink.partition-commit.success-file.name"
	watermarkZoneOption = "sink.partition-commit.watermark-time-zone"
	extractorKindOption = "partition.time-extractor.kind"
	extractorPattern    = "partition.time-extractor.timestamp-pattern"
	extractorFormatter  = "partition.time-extractor.timestamp-formatter"
)

// sinkOptions are the options of a filesystem sink.
var sinkOptions = []string{rollFileSizeOption, rollIntervalOption, rollCheckOption,
	commitTriggerOption, commitDelayOption, commitPolicyOption, successFileOption, watermarkZoneOption,
	extractorKindOption, extractorPattern, extractorFormatter}

// CreateSink implements connector.SinkFactory.
func (Factory) CreateSink(t connector.Table, env connector.Env) (connector.Sink, error) {
	c, err := parseConfig(t, env)
	if err != nil {
		return nil, err
	}
	enc, err := c.format.NewEncoder(c.recordSchema(t), c.fmtOpts)
	if err != nil {
		return nil, err
	}
	s := &Sink{table: t.Name, fmtName: c.fmtName, enc: enc, changelog: format.IsChangelog(c.format), now: env.Now,
		part: c.part, watermark: math.MinInt64}
	if s.now == nil {
		s.now = func() int64 { return time.Now().UnixMicro() }
	}
	if c.part != nil {
		s.record = make([]types.Value, len(c.part.data))
	}
	if s.rollSize, err = t.Options.MemorySize(rollFileSizeOption, 128<<20); err != nil {
		return nil, err
	}
	if s.rollSize <= 0 {
		return nil, fmt.Errorf("option '%s' must be positive", rollFileSizeOption)
	}
	if s.rollAfter, err = t.Options.PositiveDuration(rollIntervalOption, 30*time.Minute); err != nil {
		return nil, err
	}
	if _, err := t.Options.Duration(rollCheckOption, time.Minute); err != nil {
		return nil, err
	}
	if s.commit, err = parseCommit(t, c.part); err != nil {
		return nil, err
	}
	path := c.path
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	fi, statErr := os.Stat(path)
	switch {
	case statErr == nil && fi.IsDir():
		s.dir = path
	case namesDirectory(c.path, c.uri, c.part != nil):
		// Flink's layout: the path names a directory, made if missing.
		if statErr == nil {
			return nil, fmt.Errorf("cannot write %s: it is a file, and this table's path names a directory "+
				"(a PARTITIONED BY table, a file: URI or a path ending in /)", c.path)
		}
		if parent := filepath.Dir(path); !dirExists(parent) {
			return nil, fmt.Errorf("cannot write %s: its directory %s does not exist", c.path, parent)
		}
		s.dir = path
	default:
		if statErr == nil && !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("cannot write %s: not a regular file or a directory", c.path)
		}
		s.dir, s.target = filepath.Dir(path), path
		if !dirExists(s.dir) {
			return nil, fmt.Errorf("cannot write %s: its directory %s does not exist", c.path, s.dir)
		}
	}
	return s, nil
}

// namesDirectory says whether a sink's path names a directory, made if
// missing, whatever is there (Flink's layout): a PARTITIONED BY table, a
// file: URI, or a path ending in /. Otherwise an existing directory is
// one, and anything else one output file.
func namesDirectory(path string, uri, partitioned bool) bool {
	return partitioned || uri || strings.HasSuffix(path, "/")
}

func dirExists(dir string) bool {
	fi, err := os.Stat(dir)
	return err == nil && fi.IsDir()
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
	// part is the table's partitioning (nil: not PARTITIONED BY); record
	// is where a row's other columns are gathered to be encoded.
	part   *partitioning
	record []types.Value
	commit *partitionCommit // nil: partitions are not committed

	// dir is the directory written; target, if set, the one output file
	// in it (else part files go to dir, or its partition directories).
	dir, target string

	mu sync.Mutex
	// checkpointed: the job takes checkpoints, which keep this sink's
	// state; without, nothing resumes its files.
	checkpointed bool
	restored     bool
	id           string           // names this sink's files; kept in its state
	next         int              // the number of its next file
	open         map[string]*part // the in-progress file of each partition being written ("": unpartitioned)
	rolled       []*part
	prepared     []*part // rolled at a Prepare, made visible at the next Commit
	// targetLen is how long the output file will be once everything
	// prepared is committed (one output file only).
	targetLen int64
	// pending are the partitions waiting for their commit, with the
	// processing time the sink first wrote into them; watermark is the
	// input's, and prepWatermark the one at the last Prepare.
	pending       map[string]int64
	watermark     int64
	prepWatermark int64
	lock          *os.File
	owner         string   // a hash of the name of the sink's state
	incarnation   *os.File // the lock of this run (a directory)
	closed        bool
	err           error // a sticky write error
}

// part is an in-progress file.
type part struct {
	pdir    string // its partition directory, relative to the sink's ("" if none)
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
	ID        string           `json:"id"`
	Next      int              `json:"next"`
	Open      []savedPart      `json:"open,omitempty"`
	Prepared  []savedPart      `json:"prepared,omitempty"`
	TargetLen int64            `json:"target_len,omitempty"`
	Pending   map[string]int64 `json:"pending_partitions,omitempty"`
	Watermark int64            `json:"watermark,omitempty"`
}

type savedPart struct {
	Dir   string `json:"dir,omitempty"`
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
func (s *Sink) Restore(_ context.Context, r connector.SinkRestore) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.restored {
		return fmt.Errorf("filesystem sink '%s': restored twice", s.table)
	}
	s.restored, s.checkpointed = true, r.Checkpointed
	s.open, s.pending = map[string]*part{}, map[string]int64{}
	h := fnv.New32a()
	h.Write([]byte(r.Owner))
	s.owner = fmt.Sprintf("%08x", h.Sum32())
	if s.target != "" {
		if err := s.takeLock(); err != nil {
			return err
		}
	}
	state := r.Snapshot
	if state == nil {
		var id [6]byte
		if _, err := rand.Read(id[:]); err != nil {
			return fmt.Errorf("filesystem sink '%s': %w", s.table, err)
		}
		s.id = s.owner + "-" + hex.EncodeToString(id[:])
		if s.target != "" {
			fi, err := os.Stat(s.target)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("filesystem sink '%s': cannot read %s: %w", s.table, s.target, err)
			}
			if err == nil {
				s.targetLen = fi.Size()
			}
		} else if err := s.lockIncarnation(); err != nil {
			return err
		}
		return s.removeStrays(nil)
	}
	var snap snapshot
	if err := json.Unmarshal(state, &snap); err != nil || snap.ID == "" {
		return fmt.Errorf("filesystem sink '%s': its saved state is damaged (%v): start the job afresh ('state.start-fresh')", s.table, err)
	}
	s.id, s.next, s.targetLen = snap.ID, snap.Next, snap.TargetLen
	if s.target == "" {
		if err := s.lockIncarnation(); err != nil {
			return err
		}
	}
	s.prepWatermark = snap.Watermark
	maps.Copy(s.pending, snap.Pending)
	for _, sp := range snap.Prepared {
		p := &part{pdir: sp.Dir, name: sp.Name, final: sp.Final, size: sp.Len, synced: sp.Len, base: sp.Base}
		if err := s.commitPart(p); err != nil {
			return err
		}
	}
	keep := map[string]bool{}
	for _, c := range snap.Open {
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
		s.open[c.Dir] = &part{pdir: c.Dir, name: c.Name, final: c.Final, f: f, w: bufio.NewWriterSize(f, writeBufferSize),
			size: c.Len, synced: c.Len, created: s.now()}
	}
	if err := s.commitPartitions(false); err != nil {
		return err
	}
	return s.removeStrays(keep)
}

// removeStrays removes the in-progress files that no checkpoint of this
// sink's owner covers, but those in keep: its own written after the
// checkpoint restored, and those of its owner's earlier runs that died
// before a checkpoint kept their state (their lock is free: in a
// directory, each run holds one, lockIncarnation; one output file takes
// one writer at a time).
func (s *Sink) removeStrays(keep map[string]bool) error {
	prefix := s.strayPrefix()
	depth := 0
	if s.part != nil {
		depth = len(s.part.keys)
	}
	dead := map[string]bool{} // runs of the owner's whose lock is free
	isDead := func(id string) bool {
		if id == s.id || s.target != "" {
			return true
		}
		d, ok := dead[id]
		if !ok {
			lock := filepath.Join(s.dir, ".part-"+id+".lock")
			f, err := os.OpenFile(lock, os.O_RDWR, 0)
			d = errors.Is(err, os.ErrNotExist)
			if err == nil {
				d = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
				f.Close()
				if d {
					os.Remove(lock)
				}
			}
			dead[id] = d
		}
		return d
	}
	var walk func(dir string, level int) error
	walk = func(dir string, level int) error {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return fmt.Errorf("filesystem sink '%s': cannot list %s: %w", s.table, dir, err)
		}
		for _, e := range entries {
			name := filepath.Join(dir, e.Name())
			if e.IsDir() && level < depth {
				if err := walk(name, level+1); err != nil {
					return err
				}
				continue
			}
			rest, ok := strings.CutPrefix(e.Name(), prefix)
			if !ok || !strings.HasSuffix(e.Name(), ".inprogress") || keep[name] {
				continue
			}
			// rest is "<random>-<n>...": the run's ID is the owner's
			// and the random part.
			random, _, _ := strings.Cut(rest, "-")
			if !isDead(s.owner + "-" + random) {
				continue
			}
			if err := os.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("filesystem sink '%s': cannot remove %s: %w", s.table, name, err)
			}
		}
		return nil
	}
	if !dirExists(s.dir) {
		return nil
	}
	return walk(s.dir, 0)
}

// strayPrefix begins the names of the in-progress files of this sink's
// owner, whatever the run.
func (s *Sink) strayPrefix() string {
	if s.target != "" {
		return "." + filepath.Base(s.target) + "." + s.owner + "-"
	}
	return ".part-" + s.owner + "-"
}

// inProgressPrefix begins the names of this sink's in-progress files.
func (s *Sink) inProgressPrefix() string {
	if s.target != "" {
		return "." + filepath.Base(s.target) + "." + s.id + "-"
	}
	return ".part-" + s.id + "-"
}

// lockIncarnation takes the lock that says this run of the sink is alive,
// held until it closes (or its process dies): a later run of the same
// owner removes the in-progress files of a run whose lock is free.
func (s *Sink) lockIncarnation() error {
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return fmt.Errorf("filesystem sink '%s': cannot create directory %s: %w", s.table, s.dir, err)
	}
	name := filepath.Join(s.dir, ".part-"+s.id+".lock")
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("filesystem sink '%s': cannot create the lock file %s: %w", s.table, name, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return fmt.Errorf("filesystem sink '%s': %s is locked: another process runs this job with the same state", s.table, name)
	}
	s.incarnation = f
	return nil
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
		err := s.Restore(context.Background(), connector.SinkRestore{})
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
		var pdir string
		if s.part != nil {
			var err error
			if pdir, err = s.part.dir(r.Vals); err != nil {
				return fmt.Errorf("filesystem sink '%s': %w", s.table, err)
			}
			for i, c := range s.part.data {
				s.record[i] = r.Vals[c]
			}
			r.Vals = s.record
		}
		p := s.open[pdir]
		if p == nil {
			var err error
			if p, err = s.openPart(pdir); err != nil {
				return s.fail(err)
			}
		}
		if _, ok := s.pending[pdir]; !ok && s.commit != nil {
			s.pending[pdir] = s.now() // to be committed (again) once complete
		}
		// Encode straight into the writer's buffer when it has room.
		buf, err := s.enc.Encode(p.w.AvailableBuffer(), r)
		if err != nil {
			return fmt.Errorf("filesystem sink '%s': cannot encode row: %w", s.table, err)
		}
		buf = append(buf, '\n')
		if _, err := p.w.Write(buf); err != nil {
			return s.fail(fmt.Errorf("cannot write %s: %w", p.name, err))
		}
		p.size += int64(len(buf))
		if s.target == "" && p.size >= s.rollSize {
			if err := s.roll(p); err != nil {
				return s.fail(err)
			}
		}
	}
	return nil
}

// SinkWatermark implements connector.WatermarkSink: the partition-time
// commit trigger compares partitions' times with the watermark.
func (s *Sink) SinkWatermark(wm int64) {
	s.mu.Lock()
	s.watermark = max(s.watermark, wm)
	s.mu.Unlock()
}

// fail makes err sticky.
func (s *Sink) fail(err error) error {
	s.err = fmt.Errorf("filesystem sink '%s': %w", s.table, err)
	return s.err
}

// openPart starts a new in-progress file in partition directory pdir.
func (s *Sink) openPart(pdir string) (*part, error) {
	n := s.next
	s.next++
	p := &part{pdir: pdir, created: s.now(), base: -1}
	dir := filepath.Join(s.dir, filepath.FromSlash(pdir))
	if s.target != "" {
		p.name = filepath.Join(dir, s.inProgressPrefix()+strconv.Itoa(n)+".inprogress")
	} else {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("cannot create directory %s: %w", dir, err)
		}
		final := "part-" + s.id + "-" + strconv.Itoa(n) + "." + s.fmtName
		p.name = filepath.Join(dir, "."+final+".inprogress")
		p.final = filepath.Join(dir, final)
	}
	f, err := os.OpenFile(p.name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("cannot create an in-progress file: %w", err)
	}
	p.f, p.w = f, bufio.NewWriterSize(f, writeBufferSize)
	s.open[pdir] = p
	return p, nil
}

// roll ends in-progress file p: made durable and closed, it is made
// visible by the commit of the next checkpoint.
func (s *Sink) roll(p *part) error {
	delete(s.open, p.pdir)
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
// in-progress files are made durable and, when the rolling policy says so
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
	now := s.now()
	for _, pdir := range slices.Sorted(maps.Keys(s.open)) {
		p := s.open[pdir]
		roll := end || s.target != "" || p.size >= s.rollSize ||
			time.Duration(now-p.created)*time.Microsecond >= s.rollAfter
		if !roll && s.commit != nil {
			// A partition whose commit is due is rolled, so that its
			// rows are visible when its success file is.
			created, pending := s.pending[pdir]
			ready, err := s.commit.ready(pdir, created, now, s.watermark)
			if err != nil {
				return s.fail(err)
			}
			roll = pending && ready
		}
		if roll {
			if err := s.roll(p); err != nil {
				return s.fail(err)
			}
			continue
		}
		if err := p.w.Flush(); err != nil {
			return s.fail(fmt.Errorf("cannot write %s: %w", p.name, err))
		}
		if err := p.f.Sync(); err != nil {
			return s.fail(fmt.Errorf("cannot sync %s: %w", p.name, err))
		}
		p.synced = p.size
	}
	for _, p := range s.rolled {
		if s.target != "" {
			p.base = s.targetLen
			s.targetLen += p.size
		}
		s.prepared = append(s.prepared, p)
	}
	s.rolled = nil
	s.prepWatermark = s.watermark
	if end {
		s.prepWatermark = math.MaxInt64 // every partition is complete
	}
	return nil
}

// Snapshot implements connector.StatefulSink: the state after Prepare.
func (s *Sink) Snapshot() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := snapshot{ID: s.id, Next: s.next, TargetLen: s.targetLen, Watermark: s.prepWatermark}
	if len(s.pending) > 0 {
		snap.Pending = maps.Clone(s.pending)
	}
	for _, pdir := range slices.Sorted(maps.Keys(s.open)) {
		p := s.open[pdir]
		snap.Open = append(snap.Open, savedPart{Dir: p.pdir, Name: p.name, Final: p.final, Len: p.synced})
	}
	for _, p := range s.prepared {
		snap.Prepared = append(snap.Prepared, savedPart{Dir: p.pdir, Name: p.name, Final: p.final, Len: p.size, Base: p.base})
	}
	return json.Marshal(snap)
}

// Commit implements connector.Committer: what was prepared becomes
// visible, and partitions whose trigger says so are committed.
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
	if err := s.commitPartitions(s.prepWatermark == math.MaxInt64); err != nil {
		return s.fail(err)
	}
	return nil
}

// commitPartitions commits the pending partitions whose trigger says so
// (every one, with all), once none of their rows waits in an in-progress
// file.
func (s *Sink) commitPartitions(all bool) error {
	if s.commit == nil {
		return nil
	}
	now := s.now()
	for _, pdir := range slices.Sorted(maps.Keys(s.pending)) {
		if _, writing := s.open[pdir]; writing {
			continue // rolled by the Prepare that finds it due
		}
		if !all {
			ok, err := s.commit.ready(pdir, s.pending[pdir], now, s.prepWatermark)
			if err != nil || !ok {
				if err != nil {
					return err
				}
				continue
			}
		}
		if err := s.commit.commit(filepath.Join(s.dir, filepath.FromSlash(pdir))); err != nil {
			return err
		}
		delete(s.pending, pdir)
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
		return syncDir(filepath.Dir(p.final))
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
	all := append(slices.Collect(maps.Values(s.open)), s.rolled...)
	for _, p := range append(all, s.prepared...) {
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
	if f := s.incarnation; f != nil {
		if !s.checkpointed || len(s.open)+len(s.rolled)+len(s.prepared) == 0 {
			os.Remove(f.Name()) // no in-progress file of this run is left
		}
		f.Close()
	}
	return err
}

// partitionCommit is when and how partitions are committed.
type partitionCommit struct {
	partTime    bool // the trigger is partition-time (else process-time)
	delay       time.Duration
	successFile string
	part        *partitioning
	pattern     string // the extractor's timestamp pattern ("": the first value)
	formatter   string // the extractor's formatter ("": Flink's lenient default)
	zone        *time.Location
}

// parseCommit reads the partition commit options of t: nil when no
// commit policy is set (as in Flink, partitions are then not committed).
func parseCommit(t connector.Table, part *partitioning) (*partitionCommit, error) {
	kinds, ok := t.Options[commitPolicyOption]
	if !ok {
		return nil, nil
	}
	if part == nil {
		return nil, fmt.Errorf("option '%s' needs a PARTITIONED BY table", commitPolicyOption)
	}
	c := &partitionCommit{part: part, successFile: t.Options.String(successFileOption, "_SUCCESS"),
		pattern: t.Options[extractorPattern], formatter: t.Options[extractorFormatter], zone: time.UTC}
	for _, k := range strings.Split(kinds, ",") {
		switch k = strings.TrimSpace(strings.ToLower(k)); k {
		case "success-file":
		case "metastore":
			return nil, fmt.Errorf("option '%s': 'metastore' needs a Hive metastore, which Sluice has not: use 'success-file'", commitPolicyOption)
		case "custom":
			return nil, fmt.Errorf("option '%s': 'custom' policies are Java classes: use 'success-file'", commitPolicyOption)
		default:
			return nil, fmt.Errorf("option '%s': unknown policy '%s' (expected success-file)", commitPolicyOption, k)
		}
	}
	if c.successFile == "" || strings.ContainsAny(c.successFile, "/\\") {
		return nil, fmt.Errorf("option '%s' must be a file name", successFileOption)
	}
	switch tr := t.Options.String(commitTriggerOption, "process-time"); tr {
	case "process-time":
	case "partition-time":
		c.partTime = true
	default:
		return nil, fmt.Errorf("option '%s': unknown trigger '%s' (expected process-time or partition-time)", commitTriggerOption, tr)
	}
	var err error
	if c.delay, err = t.Options.Duration(commitDelayOption, 0); err != nil {
		return nil, err
	}
	if c.delay < 0 {
		return nil, fmt.Errorf("option '%s' must not be negative", commitDelayOption)
	}
	if k := t.Options.String(extractorKindOption, "default"); k != "default" {
		return nil, fmt.Errorf("option '%s': only 'default' is supported ('custom' extractors are Java classes)", extractorKindOption)
	}
	if z, ok := t.Options[watermarkZoneOption]; ok {
		if c.zone, err = time.LoadLocation(z); err != nil {
			return nil, fmt.Errorf("option '%s': unknown time zone '%s'", watermarkZoneOption, z)
		}
	}
	if c.formatter != "" {
		if _, err := expr.ParseWithPattern(c.formatter, ""); err != nil && strings.Contains(err.Error(), "format '") {
			return nil, fmt.Errorf("option '%s': %w", extractorFormatter, err)
		}
	}
	return c, nil
}

// ready reports whether partition pdir, first written at created
// (processing time), may be committed at processing time now, with the
// watermark wm: Flink's ProcTimeCommitPredicate and
// PartitionTimeCommitPredicate.
func (c *partitionCommit) ready(pdir string, created, now, wm int64) (bool, error) {
	delay := c.delay.Microseconds()
	if !c.partTime {
		return delay == 0 || now > created+delay, nil
	}
	if wm == math.MinInt64 {
		return false, nil
	}
	t, err := c.partitionTime(pdir)
	if err != nil {
		return false, err
	}
	return wm > t+delay, nil
}

// partitionTime extracts the time of partition pdir, as Flink's default
// extractor does, as an instant in the watermark's time zone.
func (c *partitionCommit) partitionTime(pdir string) (int64, error) {
	var vals []string
	for _, seg := range strings.Split(pdir, "/") {
		_, v, _ := strings.Cut(seg, "=")
		vals = append(vals, unescapePathName(v))
	}
	ts := vals[0]
	if c.pattern != "" {
		ts = c.pattern
		for i, k := range c.part.keys {
			ts = strings.ReplaceAll(ts, "$"+k, vals[i])
		}
	}
	var wall int64
	var err error
	if c.formatter != "" {
		wall, err = expr.ParseWithPattern(c.formatter, ts)
	} else if wall, err = types.ParseTimestamp(ts); err != nil {
		var days int64
		if days, err = types.ParseDate(ts); err == nil {
			wall = days * 86_400_000_000
		}
	}
	if err != nil {
		return 0, fmt.Errorf("cannot read the time of partition %s from %q: %w", pdir, ts, err)
	}
	return types.LocalToInstant(wall, c.zone), nil
}

// commit writes the success file of the partition in dir.
func (c *partitionCommit) commit(dir string) error {
	name := filepath.Join(dir, c.successFile)
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("cannot commit partition %s: %w", dir, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("cannot commit partition %s: %w", dir, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("cannot commit partition %s: %w", dir, err)
	}
	return syncDir(dir)
}

// SingleWriterTarget implements connector.SingleWriterFactory: a table
// whose path is a file (not a directory, a file: URI, a path ending in /
// or a PARTITIONED BY table) is written by one writer.
func (Factory) SingleWriterTarget(t connector.Table) (string, bool) {
	p, err := t.Options.Required("path")
	if err != nil {
		return "", false
	}
	path, uri, err := localPath(p)
	if err != nil || namesDirectory(path, uri, len(t.PartitionKeys) > 0) {
		return "", false
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return "", false
	}
	return path, true
}
