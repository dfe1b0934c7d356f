package procgen

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/internal/pace"
	"github.com/sluicesql/sluice/types"
)

// Factory builds procgen sources.
type Factory struct{}

// New returns the procgen connector factory.
func New() Factory { return Factory{} }

// Name implements connector.Factory.
func (Factory) Name() string { return "procgen" }

// The columns a table may declare.
const (
	colTime = iota
	colHost
	colUser
	colParent
	colImage
	colCmd
	colPID
	colParentPID
	colIntegrity
	numColumns
)

var columnNames = []string{"event_time", "host", "user_name", "parent_image", "image", "command_line", "pid", "parent_pid", "integrity_level"}

// Salts keep the draws of catalog entries, events and fresh processes
// apart.
const (
	saltCatalog = 0x9e3779b97f4a7c15
	saltEvent   = 0xbf58476d1ce4e5b9
	saltFresh   = 0x94d049bb133111eb
)

// maxCatalog bounds 'catalog.size': the catalog is built when the table
// is opened (about 250 bytes an entry).
const maxCatalog = 100_000

// CreateSource implements connector.SourceFactory.
func (Factory) CreateSource(t connector.Table, env connector.Env) (connector.Source, error) {
	if err := connector.RejectMetadata("procgen", t); err != nil {
		return nil, err
	}
	o := t.Options
	if err := o.CheckKnown("procgen", []string{"connector", "events.num", "repetition", "catalog.size", "zipf.exponent",
		"hosts", "users", "event-time.rate", "base-time", "rows-per-second", "seed", "partitions"}); err != nil {
		return nil, err
	}
	s := &Source{total: -1}
	for _, c := range t.Schema.Columns {
		i := -1
		for j, n := range columnNames {
			if strings.EqualFold(n, c.Name) {
				i = j
			}
		}
		if i < 0 {
			return nil, fmt.Errorf("procgen table %s: unknown column '%s': a procgen table has the columns %s",
				t.Name, c.Name, strings.Join(columnNames, ", "))
		}
		var ok bool
		switch i {
		case colTime:
			ok = c.Type.Kind == types.KindTimestamp || c.Type.Kind == types.KindTimestampLTZ
		case colPID, colParentPID:
			ok = c.Type.Kind == types.KindBigInt
		default:
			ok = c.Type.Kind == types.KindVarChar
		}
		if !ok {
			want := map[int]string{colTime: "TIMESTAMP(3) or TIMESTAMP_LTZ(3)", colPID: "BIGINT", colParentPID: "BIGINT"}[i]
			if want == "" {
				want = "STRING or VARCHAR(n)"
			}
			return nil, fmt.Errorf("procgen table %s: column %s must be %s, not %s", t.Name, c.Name, want, c.Type)
		}
		s.cols = append(s.cols, i)
		s.kinds = append(s.kinds, c.Type.Kind)
	}
	var err error
	if _, ok := o["events.num"]; ok {
		if s.total, err = o.Int("events.num", 0); err != nil {
			return nil, err
		}
		if s.total < 0 {
			return nil, fmt.Errorf("option 'events.num' must not be negative, got %d", s.total)
		}
	}
	if s.repetition, err = o.Float("repetition", 0.8); err != nil {
		return nil, err
	}
	if !(s.repetition >= 0 && s.repetition <= 1) {
		return nil, fmt.Errorf("option 'repetition' must be between 0 and 1, got '%s'", o["repetition"])
	}
	exp, err := o.Float("zipf.exponent", 1.1)
	if err != nil {
		return nil, err
	}
	if !(exp > 0 && exp <= 10) {
		return nil, fmt.Errorf("option 'zipf.exponent' must be above 0 and at most 10, got '%s'", o["zipf.exponent"])
	}
	size := func(key string, def, max int64) (int, error) {
		n, err := o.Int(key, def)
		if err != nil {
			return 0, err
		}
		if n < 1 || n > max {
			return 0, fmt.Errorf("option '%s' must be between 1 and %d, got %d", key, max, n)
		}
		return int(n), nil
	}
	catalog, err := size("catalog.size", 10_000, maxCatalog)
	if err != nil {
		return nil, err
	}
	hosts, err := size("hosts", 500, 1_000_000)
	if err != nil {
		return nil, err
	}
	users, err := size("users", 2000, 1_000_000)
	if err != nil {
		return nil, err
	}
	parts, err := size("partitions", 1, connector.MaxPartitions)
	if err != nil {
		return nil, err
	}
	s.parts = parts
	rate, err := o.Float("event-time.rate", 10000)
	if err != nil {
		return nil, err
	}
	if !(rate > 0 && rate <= pace.MaxRate) {
		return nil, fmt.Errorf("option 'event-time.rate' must be a number of events per second above 0 and at most 1e12, got '%s'", o["event-time.rate"])
	}
	s.delay = 1e6 / rate
	base := "2024-01-01 00:00:00"
	if v, ok := o["base-time"]; ok {
		base = v
	}
	bt, err := time.Parse("2006-01-02 15:04:05", base)
	if err != nil {
		return nil, fmt.Errorf("option 'base-time': expected 'yyyy-MM-dd HH:mm:ss', got '%s'", base)
	}
	s.base = bt.UnixMicro()
	if s.rps, err = o.Float("rows-per-second", 0); err != nil {
		return nil, err
	}
	if !(s.rps >= 0 && s.rps <= pace.MaxRate) {
		return nil, fmt.Errorf("option 'rows-per-second' must be 0 (no limit) or a number of rows per second above 0 and at most 1e12, got '%s'",
			o["rows-per-second"])
	}
	seed, err := o.Int("seed", 0)
	if err != nil {
		return nil, err
	}
	s.seed = uint64(seed)

	s.sizes = [3]int{catalog, hosts, users}
	s.exp = exp
	return s, nil
}

// build makes the model (the catalog of processes, hosts and users) the
// first time a reader opens: a source that no reader opens (a job
// reading through another's shared reader) costs no model.
func (s *Source) build() {
	catalog, hosts, users, exp := s.sizes[0], s.sizes[1], s.sizes[2], s.exp
	s.catalogZipf, s.hostZipf, s.userZipf = newZipf(catalog, exp), newZipf(hosts, exp), newZipf(users, exp)
	s.catalog = make([]process, catalog)
	for k := range s.catalog {
		s.catalog[k] = makeProcess(newRNG(s.seed, saltCatalog, uint64(k)), false)
	}
	s.hosts = make([]string, hosts)
	for i := range s.hosts {
		s.hosts[i] = hostName(i)
	}
	s.users = make([]string, users)
	for i := range s.users {
		s.users[i] = userName(i)
	}
}

// Source is a procgen table.
type Source struct {
	cols       []int // the model's column of each declared column
	kinds      []types.Kind
	total      int64 // events over all partitions; -1: unbounded
	repetition float64
	delay      float64 // µs of event time between events
	base       int64   // µs: time of event 0
	rps        float64
	seed       uint64
	parts      int

	catalog      []process
	hosts, users []string
	// The model, built by the first Open (see build): sizes are the
	// catalog's, the hosts' and the users' counts.
	sizes                           [3]int
	exp                             float64
	once                            sync.Once
	catalogZipf, hostZipf, userZipf zipf
}

// Partitions implements connector.Source.
func (s *Source) Partitions() int { return s.parts }

// Bounded implements connector.Source.
func (s *Source) Bounded() bool { return s.total >= 0 }

// Generates implements connector.Generator: rows are generated whole,
// whatever columns a job reads.
func (s *Source) Generates() bool { return true }

// Open implements connector.Source.
func (s *Source) Open(ctx context.Context, p int) (connector.Reader, error) {
	return s.OpenAfter(ctx, p, 0)
}

// OpenAfter implements connector.Resumer: partition offsets count the
// partition's events, so a resumed reader starts right after offset.
func (s *Source) OpenAfter(_ context.Context, p int, offset int64) (connector.Reader, error) {
	if p < 0 || p >= s.parts {
		return nil, fmt.Errorf("procgen: partition %d out of range [0, %d)", p, s.parts)
	}
	s.once.Do(s.build)
	r := &Reader{src: s, part: p, done: max(offset, 0), end: -1, pace: pace.Pacer{Rate: s.rps / float64(s.parts)}}
	if s.total >= 0 {
		r.end = 0
		if int64(p) < s.total {
			r.end = (s.total-int64(p)-1)/int64(s.parts) + 1
		}
	}
	return r, nil
}

// Event returns the fields of event n, by the model's columns.
func (s *Source) event(n int64, dst *[numColumns]types.Value) {
	r := newRNG(s.seed, saltEvent, uint64(n))
	var p process
	if r.float() < s.repetition {
		p = s.catalog[s.catalogZipf.sample(r.float())]
	} else {
		p = makeProcess(newRNG(s.seed, saltFresh, uint64(n)), true)
	}
	user := s.users[s.userZipf.sample(r.float())]
	dst[colTime] = types.TimestampValue(s.base + int64(float64(n)*s.delay)/1000*1000)
	dst[colHost] = types.StringValue(s.hosts[s.hostZipf.sample(r.float())])
	dst[colUser] = types.StringValue(user)
	dst[colParent] = types.StringValue(p.parent)
	dst[colImage] = types.StringValue(p.image)
	dst[colCmd] = types.StringValue(p.cmd)
	pid := 4 + int64(r.intn(65532))
	dst[colPID] = types.BigIntValue(pid)
	dst[colParentPID] = types.BigIntValue(4 + int64(r.intn(65532)))
	dst[colIntegrity] = types.StringValue(integrity(user, r))
}

// Reader reads one procgen partition.
type Reader struct {
	src  *Source
	part int
	done int64 // events of the partition read (the last offset)
	end  int64 // events of the partition; -1: unbounded
	pace pace.Pacer
	ev   [numColumns]types.Value
}

// Read implements connector.Reader.
func (r *Reader) Read(ctx context.Context, b *types.Batch, max int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if r.end >= 0 && r.done >= r.end {
		return io.EOF
	}
	n := int64(max)
	if r.end >= 0 {
		n = min(n, r.end-r.done)
	}
	if r.src.rps > 0 {
		var err error
		if n, err = r.pace.Take(ctx, n); err != nil {
			return err
		}
	}
	s := r.src
	for range n {
		r.done++
		num := (r.done-1)*int64(s.parts) + int64(r.part)
		s.event(num, &r.ev)
		vals := b.AddRow(types.Insert, types.Origin{Part: int32(r.part), Offset: r.done}, len(s.cols))
		for i, c := range s.cols {
			v := r.ev[c]
			if c == colTime && s.kinds[i] == types.KindTimestampLTZ {
				v = types.TimestampLTZValue(v.Int())
			}
			vals[i] = v
		}
	}
	return nil
}

// Close implements connector.Reader.
func (r *Reader) Close() error { return nil }
