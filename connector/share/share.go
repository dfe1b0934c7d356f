package share

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/sluicesql/sluice/connector"
)

// Defaults of a Registry's Options.
const (
	// DefaultBatchSize is the most rows a hub reads at once.
	DefaultBatchSize = 1024
	// DefaultQueue is how many batches a subscriber may have waiting.
	DefaultQueue = 4
	// DefaultPushFrom is the fewest jobs of a partition that its hub
	// pushes its batches to (see Options.PushFrom): a source read by one
	// job alone is read and processed on two goroutines, in parallel.
	DefaultPushFrom = 2
)

// Options configure a Registry.
type Options struct {
	// Logf, if set, hears of jobs sharing a reader (attaching, leaving)
	// and of a resumed job that reads a partition on its own.
	Logf func(format string, args ...any)
	// BatchSize is the most rows a hub reads at once; 0: DefaultBatchSize.
	BatchSize int
	// Queue is how many batches a subscriber may have waiting before the
	// hub waits for it; 0: DefaultQueue.
	Queue int
	// PushFrom is the fewest subscribers of a partition from which its
	// hub runs the chains of those waiting for its next batch itself
	// (connector.Pusher), one after the other, rather than wake each
	// job's goroutine; 0: DefaultPushFrom; below 0: never.
	PushFrom int
}

// Registry holds the hubs of an engine's shared sources. It is safe for
// concurrent use.
type Registry struct {
	opts Options

	mu   sync.Mutex
	hubs map[string]*hub
}

// NewRegistry returns an empty registry.
func NewRegistry(opts Options) *Registry {
	if opts.BatchSize <= 0 {
		opts.BatchSize = DefaultBatchSize
	}
	if opts.Queue <= 0 {
		opts.Queue = DefaultQueue
	}
	if opts.PushFrom == 0 {
		opts.PushFrom = DefaultPushFrom
	}
	return &Registry{opts: opts, hubs: map[string]*hub{}}
}

// note writes line to the log, unless it is "".
func (r *Registry) note(line string) {
	if line != "" {
		r.logf("%s", line)
	}
}

// logf writes a line to the log, if there is one.
func (r *Registry) logf(format string, args ...any) {
	if r.opts.Logf != nil {
		r.opts.Logf(format, args...)
	}
}

// Enabled reads a table's connector.SharedSourceOption (true when
// absent).
func Enabled(t connector.Table) (bool, error) {
	return t.Options.Bool(connector.SharedSourceOption, true)
}

// positioned is a source whose readers report their positions themselves
// (exec.PositionSource: a shuffle topic's).
type positioned interface {
	OpenAt(ctx context.Context, p int, pos []byte) (connector.Reader, error)
}

// Shareable reports whether src may be read once for several jobs: it is
// unbounded, its partitions are fixed and read by offset, and its readers
// acknowledge nothing to the system they read (connector.Acknowledged).
func Shareable(src connector.Source) bool {
	if src.Bounded() {
		return false
	}
	if _, ok := src.(connector.NamedPartitions); ok {
		return false
	}
	if _, ok := src.(connector.OpenLimit); ok {
		return false
	}
	if a, ok := src.(connector.Acknowledged); ok && a.Acknowledges() {
		return false
	}
	_, ok := src.(positioned)
	return !ok
}

// Wrap returns the source job reads table t through: src itself when t
// is not to be shared (its connector.SharedSourceOption is false, or src
// is not Shareable), else a Source whose readers attach to the hub of
// t's key, made with src when there is none. An invalid value of the
// option is an error.
//
// A job reads each partition from where it would start alone: the
// table's startup position, or after its checkpoint. It attaches to the
// hub's reader at once when that reader is there (it has handed out the
// rows up to the job's offset and none past it, or, for a job starting
// afresh, none at all since it opened at the startup position);
// otherwise it reads the partition with a reader of its own until the
// hub's last row is among those it has just read, and then attaches. A generator's rows have no history: a job starting afresh
// attaches to its hub at the hub's position (whole, a changelog scan,
// never does: it must see every row it will later see updated).
func (r *Registry) Wrap(job string, t connector.Table, src connector.Source, whole bool) (connector.Source, error) {
	on, err := Enabled(t)
	if err != nil {
		return nil, err
	}
	if !on || !Shareable(src) {
		return src, nil
	}
	g, ok := src.(connector.Generator)
	return &Source{reg: r, job: job, table: t, src: src, key: Key(t, src), whole: whole, generated: ok && g.Generates()}, nil
}

// Key returns what identifies the rows a reader of t through src
// produces: two sources with one key read the same rows (see the package
// documentation).
func Key(t connector.Table, src connector.Source) string {
	var b strings.Builder
	fmt.Fprintf(&b, "table %q\nidentity %q\n", t.Name, connector.SourceIdentity(t, src))
	keys := make([]string, 0, len(t.Options))
	for k := range t.Options {
		if k != connector.SharedSourceOption {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "option %q=%q\n", k, t.Options[k])
	}
	for _, c := range t.Schema.Columns {
		fmt.Fprintf(&b, "column %q %s\n", c.Name, c.Type)
	}
	for _, m := range t.Metadata {
		fmt.Fprintf(&b, "metadata %q %q %s %v\n", m.Name, m.Key, m.Type, m.Virtual)
	}
	fmt.Fprintf(&b, "primary key %q\npartitions %d\n", t.PrimaryKey, src.Partitions())
	if tp, ok := src.(interface{ TopicPartitions() []string }); ok {
		fmt.Fprintf(&b, "topic partitions %q\n", tp.TopicPartitions())
	}
	if g, ok := src.(connector.Generator); (!ok || !g.Generates()) && t.Read != nil {
		fmt.Fprintf(&b, "read %v\n", t.Read)
	}
	return b.String()
}

// lookup returns the hub of key, if there is one, with one more user:
// release gives it back.
func (r *Registry) lookup(key string) *hub {
	r.mu.Lock()
	defer r.mu.Unlock()
	h := r.hubs[key]
	if h != nil {
		h.users++
	}
	return h
}

// acquire returns the hub of key, made by mk when there is none, with one
// more user: release gives it back.
func (r *Registry) acquire(key string, mk func() *hub) *hub {
	r.mu.Lock()
	defer r.mu.Unlock()
	h := r.hubs[key]
	if h == nil {
		h = mk()
		r.hubs[key] = h
	}
	h.users++
	return h
}

// release gives back a user of h; the last one forgets h (its partitions
// have stopped by then).
func (r *Registry) release(h *hub) {
	r.mu.Lock()
	defer r.mu.Unlock()
	h.users--
	if h.users == 0 && r.hubs[h.key] == h {
		delete(r.hubs, h.key)
	}
}

// Info describes a shared source: a hub and its subscribers.
type Info struct {
	// Table is the table's name.
	Table string
	// Jobs are the jobs attached to it, sorted.
	Jobs []string
	// Subscribers counts the partitions attached, over all jobs.
	Subscribers int
	// Readers counts the underlying readers open (one per partition
	// read).
	Readers int
	// Opens counts the underlying readers opened since the hub was made.
	Opens int64
	// RowsRead counts the rows the underlying readers read, once however
	// many jobs received them.
	RowsRead int64
}

// Sources lists the hubs of the registry, by table name and then by
// jobs.
func (r *Registry) Sources() []Info {
	r.mu.Lock()
	hubs := make([]*hub, 0, len(r.hubs))
	for _, h := range r.hubs {
		hubs = append(hubs, h)
	}
	r.mu.Unlock()
	out := make([]Info, 0, len(hubs))
	for _, h := range hubs {
		out = append(out, h.info())
	}
	slices.SortFunc(out, func(a, b Info) int {
		if c := strings.Compare(a.Table, b.Table); c != 0 {
			return c
		}
		return slices.Compare(a.Jobs, b.Jobs)
	})
	return out
}

// Source is a table as one job reads it through a hub: each partition it
// opens attaches to the hub's reader of that partition, at once or once
// it has caught up with it. It is a connector.Resumer even when the
// table's own source is not, so that a resumed job says where it resumes
// and is never attached past it.
type Source struct {
	reg   *Registry
	job   string
	table connector.Table
	src   connector.Source // the job's own: the hub's when it makes it, and its readers of its own
	key   string
	// whole: the scan is a changelog, which a job reads from its startup
	// position; generated: the source is a connector.Generator, whose
	// rows have no history to read.
	whole, generated bool
}

// Partitions implements connector.Source.
func (s *Source) Partitions() int { return s.src.Partitions() }

// Bounded implements connector.Source: shared sources never end.
func (s *Source) Bounded() bool { return false }

// Identity implements connector.Identified: the table's, so that a job's
// state is the same shared or not.
func (s *Source) Identity() string { return connector.SourceIdentity(s.table, s.src) }

// Open implements connector.Source: the partition's rows from where the
// table's options say it starts (a generator's: from the hub's position).
func (s *Source) Open(ctx context.Context, p int) (connector.Reader, error) {
	return s.attach(ctx, p, false, 0)
}

// OpenAfter implements connector.Resumer: the partition's rows after
// offset.
func (s *Source) OpenAfter(ctx context.Context, p int, offset int64) (connector.Reader, error) {
	return s.attach(ctx, p, true, offset)
}

func (s *Source) attach(ctx context.Context, p int, resume bool, after int64) (connector.Reader, error) {
	if p < 0 || p >= s.src.Partitions() {
		return nil, fmt.Errorf("shared source %s: partition %d out of range [0, %d)", s.table.Name, p, s.src.Partitions())
	}
	h := s.reg.acquire(s.key, func() *hub { return newHub(s.reg, s.key, s.table.Name, s.src) })
	r, err := h.attach(ctx, s, p, resume, after)
	if err != nil || r == nil {
		s.reg.release(h)
	}
	if err != nil || r != nil {
		return r, err
	}
	// Behind the hub: on its own until it has caught up.
	own, err := s.openOwn(ctx, p, resume, after)
	if err != nil {
		return nil, err
	}
	c := &catchUp{src: s, part: p, own: own, last: after, known: resume}
	c.noteReader(own)
	return c, nil
}

// openOwn opens a reader of partition p of the job's own, where the job
// would start alone.
func (s *Source) openOwn(ctx context.Context, p int, resume bool, after int64) (connector.Reader, error) {
	if !resume {
		return s.src.Open(ctx, p)
	}
	if rs, ok := s.src.(connector.Resumer); ok {
		return rs.OpenAfter(ctx, p, after)
	}
	// Replayed from the start, without what the job has seen.
	r, err := s.src.Open(ctx, p)
	if err != nil {
		return nil, err
	}
	return &skipTo{Reader: r, offset: after}, nil
}
