package datagen

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/sluicesql/sluice/connector"
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
	rps, err := t.Options.Float("rows-per-second", 10000)
	if err != nil {
		return nil, err
	}
	if !(rps > 0) {
		return nil, fmt.Errorf("option 'rows-per-second' must be positive, got %v", rps)
	}
	parts, err := t.Options.Int("partitions", 1)
	if err != nil {
		return nil, err
	}
	if parts < 1 || parts > 1<<16 {
		return nil, fmt.Errorf("option 'partitions' must be between 1 and 65536, got %d", parts)
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

// Source is a datagen table.
type Source struct {
	gens   []generator
	width  int
	parts  int
	rate   float64 // rows per second per partition
	total  int64   // rows over all partitions; -1: unbounded
	seed   uint64
	seeded bool
	now    func() int64
}

// Partitions implements connector.Source.
func (s *Source) Partitions() int { return s.parts }

// Bounded implements connector.Source.
func (s *Source) Bounded() bool { return s.total >= 0 }

// Open implements connector.Source.
func (s *Source) Open(_ context.Context, p int) (connector.Reader, error) {
	if p < 0 || p >= s.parts {
		return nil, fmt.Errorf("datagen: partition %d out of range [0, %d)", p, s.parts)
	}
	seed := s.seed
	if !s.seeded {
		seed = rand.Uint64()
	}
	r := &Reader{src: s, part: int32(p), rng: rand.New(rand.NewPCG(seed, uint64(p))), end: -1}
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
	start   time.Time
}

// maxWait bounds how long Read waits for the rate limit before returning
// no rows, as the Reader contract asks.
const maxWait = 100 * time.Millisecond

// Read implements connector.Reader.
func (r *Reader) Read(ctx context.Context, b *types.Batch, max int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if r.end >= 0 && r.next >= r.end {
		return io.EOF
	}
	if r.start.IsZero() {
		r.start = time.Now()
	}
	n := int64(max)
	if r.end >= 0 {
		n = min(n, r.end-r.next)
	}
	allowed := r.allowed()
	if allowed <= 0 {
		// Sleep until the next row is due, but not longer than maxWait.
		due := r.start.Add(time.Duration(float64(r.emitted) / r.src.rate * float64(time.Second)))
		wait := min(time.Until(due), maxWait)
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
		}
		if allowed = r.allowed(); allowed <= 0 {
			return nil
		}
	}
	n = min(n, allowed)
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

// allowed returns how many rows the rate limit lets through now: the first
// row at once, then rate rows per second.
func (r *Reader) allowed() int64 {
	due := int64(time.Since(r.start).Seconds()*r.src.rate) + 1
	return due - r.emitted
}

// Close implements connector.Reader.
func (r *Reader) Close() error { return nil }
