package datagen

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/internal/pace"
	"github.com/sluicesql/sluice/types"
)

// Factory builds datagen sources.
type Factory struct{}

// New returns the datagen connector factory.
func New() Factory { return Factory{} }

// Name implements connector.Factory.
func (Factory) Name() string { return "datagen" }

// CreateSource implements connector.SourceFactory.
func (Factory) CreateSource(t connector.Table, env connector.Env) (connector.Source, error) {
	if err := connector.RejectMetadata("datagen", t); err != nil {
		return nil, err
	}
	b := &builder{opts: t.Options, seqLen: -1,
		known: []string{"connector", "rows-per-second", "number-of-rows", "seed", "partitions"}}
	s := &Source{width: t.Schema.Len(), now: env.Now}
	for _, c := range t.Schema.Columns {
		g, err := b.build("fields."+c.Name+".", c.Type)
		if err != nil {
			return nil, err
		}
		s.gens = append(s.gens, g)
	}
	if err := t.Options.CheckKnown("datagen", b.known); err != nil {
		return nil, err
	}
	if s.now == nil {
		s.now = func() int64 { return time.Now().UnixMicro() }
	}
	if err := s.checkRowBytes(t.Schema); err != nil {
		return nil, err
	}
	rps, err := t.Options.Float("rows-per-second", 10000)
	if err != nil {
		return nil, err
	}
	if !(rps > 0 && rps <= pace.MaxRate) {
		return nil, fmt.Errorf("option 'rows-per-second' must be a number of rows per second above 0 and at most 1e12, got '%s'",
			t.Options["rows-per-second"])
	}
	parts, err := t.Options.Int("partitions", 1)
	if err != nil {
		return nil, err
	}
	if parts < 1 || parts > connector.MaxPartitions {
		return nil, fmt.Errorf("option 'partitions' must be between 1 and %d, got %d", connector.MaxPartitions, parts)
	}
	s.parts = int(parts)
	s.rate = rps / float64(parts)
	s.total = b.seqLen
	if _, ok := t.Options["number-of-rows"]; ok {
		n, err := t.Options.Int("number-of-rows", 0)
		if err != nil {
			return nil, err
		}
		if n < 0 {
			return nil, fmt.Errorf("option 'number-of-rows' must not be negative, got %d", n)
		}
		if s.total < 0 || n < s.total {
			s.total = n
		}
	}
	if _, ok := t.Options["seed"]; ok {
		seed, err := t.Options.Int("seed", 0)
		if err != nil {
			return nil, err
		}
		s.seed, s.seeded = uint64(seed), true
	}
	return s, nil
}

// maxRowBytes bounds the memory a generated row may take (by the
// generators' estimate), and maxReadBytes that of the rows of one read.
const (
	maxRowBytes  = 16 << 20
	maxReadBytes = 16 << 20
)

// checkRowBytes refuses lengths that let a row take more than maxRowBytes,
// naming the column that takes the most.
func (s *Source) checkRowBytes(schema types.Schema) error {
	s.rowBytes = rowOverhead
	big := 0
	for i, g := range s.gens {
		s.rowBytes = satAdd(s.rowBytes, g.size())
		if g.size() > s.gens[big].size() {
			big = i
		}
	}
	if s.rowBytes <= maxRowBytes {
		return nil
	}
	name := schema.Columns[big].Name
	return fmt.Errorf("the options of column %s ('fields.%s.*') let a generated row take up to %s; at most 16 MiB is allowed: lower their lengths",
		name, name, formatBytes(s.rowBytes))
}

func formatBytes(n int64) string {
	if n >= 1<<40 {
		return "more than 1 TiB"
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// Source is a datagen table.
type Source struct {
	gens     []generator
	rowBytes int64 // the most a row may take
	width    int
	parts    int
	rate     float64 // rows per second per partition
	total    int64   // rows over all partitions; -1: unbounded
	seed     uint64
	seeded   bool
	now      func() int64
}

// Partitions implements connector.Source.
func (s *Source) Partitions() int { return s.parts }

// Bounded implements connector.Source.
func (s *Source) Bounded() bool { return s.total >= 0 }

// Generates implements connector.Generator: rows are generated whole,
// whatever columns a job reads.
func (s *Source) Generates() bool { return true }

// Open implements connector.Source.
func (s *Source) Open(_ context.Context, p int) (connector.Reader, error) {
	if p < 0 || p >= s.parts {
		return nil, fmt.Errorf("datagen: partition %d out of range [0, %d)", p, s.parts)
	}
	seed := s.seed
	if !s.seeded {
		seed = rand.Uint64()
	}
	r := &Reader{src: s, part: int32(p), rng: rand.New(rand.NewPCG(seed, uint64(p))), end: -1,
		pace: pace.Pacer{Rate: s.rate}}
	if s.total >= 0 {
		// Partition p owns global rows [p*total/parts, (p+1)*total/parts).
		r.next = mulDiv(s.total, int64(p), int64(s.parts))
		r.end = mulDiv(s.total, int64(p)+1, int64(s.parts))
	}
	return r, nil
}

// mulDiv returns a*b/c without overflow for b <= c.
func mulDiv(a, b, c int64) int64 {
	return a/c*b + a%c*b/c
}

// Reader reads one datagen partition.
type Reader struct {
	src     *Source
	part    int32
	rng     *rand.Rand
	next    int64 // global index of the next row
	end     int64 // -1: unbounded
	emitted int64
	pace    pace.Pacer
}

// Read implements connector.Reader. It reads at most as many rows as fit
// in maxReadBytes, as many as the rate lets through now; when none is due
// it waits for the next one, at most pace.MaxWait, before returning.
func (r *Reader) Read(ctx context.Context, b *types.Batch, limit int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if r.end >= 0 && r.next >= r.end {
		return io.EOF
	}
	n := max(min(int64(limit), maxReadBytes/r.src.rowBytes), 1)
	if r.end >= 0 {
		n = min(n, r.end-r.next)
	}
	n, err := r.pace.Take(ctx, n)
	if err != nil {
		return err
	}
	now := r.src.now()
	for range n {
		r.emitted++
		vals := b.AddRow(types.Insert, types.Origin{Part: r.part, Offset: r.emitted}, r.src.width)
		for i, g := range r.src.gens {
			vals[i] = g.gen(r.rng, r.next, now)
		}
		r.next++
	}
	return nil
}

// Close implements connector.Reader.
func (r *Reader) Close() error { return nil }
