package metricstore

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/sluicesql/sluice/types"
)

// benchStore is a store with a group of n keys (one BIGINT) and ten
// metrics of the usual kinds.
func benchStore(b *testing.B, n int, opts Options) *Store {
	g := Group{Name: "accounts", Keys: []types.Column{{Name: "account_id", Type: types.BigInt}}}
	for i := range 10 {
		t := types.BigInt
		switch i % 4 {
		case 1:
			t = types.Double
		case 2:
			t = types.Decimal(18, 2)
		}
		g.Metrics = append(g.Metrics, Metric{Name: fmt.Sprint("m", i), Type: t})
	}
	s := open(b, opts, g)
	rnd := rand.New(rand.NewPCG(1, 2))
	now := time.Now().UnixMilli()
	changes := make([]Change, 0, 10000)
	for a := range int64(n) {
		vals := make([]types.Value, 10)
		for i, m := range g.Metrics {
			x := rnd.Int64N(100000)
			switch m.Type.Kind {
			case types.KindDouble:
				vals[i] = types.DoubleValue(float64(x) / 7)
			case types.KindDecimal:
				vals[i] = types.DecimalValue(x, 2)
			default:
				vals[i] = types.BigIntValue(x)
			}
		}
		changes = append(changes, Change{Key: []types.Value{types.BigIntValue(a)}, Values: vals, EventTime: now})
		if len(changes) == cap(changes) || a == int64(n)-1 {
			if err := s.Commit("accounts", changes); err != nil {
				b.Fatal(err)
			}
			changes = changes[:0]
		}
	}
	return s
}

// BenchmarkRead reads 1,000 random keys × 10 metrics of a group of
// 100,000 or 1,000,000 keys, and encodes the answer in JSON:
//
//	GOMAXPROCS=1 go test ./metricstore -run '^$' -bench Read -benchmem
func BenchmarkRead(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		s := benchStore(b, n, Options{MemoryBudget: 4 << 30})
		rnd := rand.New(rand.NewPCG(3, 4))
		batches := make([][][]types.Value, 64)
		for i := range batches {
			for range 1000 {
				batches[i] = append(batches[i], []types.Value{types.BigIntValue(rnd.Int64N(int64(n)))})
			}
		}
		var buf []byte
		b.Run(fmt.Sprintf("keys=%d/read", n), func(b *testing.B) {
			b.ReportAllocs()
			defer reportCPU(b)()
			for i := range b.N {
				if _, err := s.Read("accounts", batches[i%len(batches)], nil); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("keys=%d/read+json", n), func(b *testing.B) {
			b.ReportAllocs()
			defer reportCPU(b)()
			for i := range b.N {
				r, err := s.Read("accounts", batches[i%len(batches)], nil)
				if err != nil {
					b.Fatal(err)
				}
				buf = r.AppendJSON(buf[:0])
			}
			b.ReportMetric(float64(len(buf)), "bytes")
		})
		b.Run(fmt.Sprintf("keys=%d/readjson", n), func(b *testing.B) {
			b.ReportAllocs()
			defer reportCPU(b)()
			for i := range b.N {
				var err error
				if buf, err = s.ReadJSON(buf[:0], "accounts", batches[i%len(batches)], nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCommit commits 1,000 changes of random keys of a group of
// 100,000 keys, all metrics or one:
//
//	GOMAXPROCS=1 go test ./metricstore -run '^$' -bench Commit -benchmem
func BenchmarkCommit(b *testing.B) {
	s := benchStore(b, 100_000, Options{})
	rnd := rand.New(rand.NewPCG(5, 6))
	for _, masked := range []bool{false, true} {
		b.Run(fmt.Sprintf("masked=%v", masked), func(b *testing.B) {
			changes := make([]Change, 1000)
			b.ReportAllocs()
			defer reportCPU(b)()
			for range b.N {
				for i := range changes {
					vals := make([]types.Value, 10)
					for j := range vals {
						vals[j] = types.BigIntValue(rnd.Int64N(1000))
					}
					vals[1], vals[5], vals[9] = types.DoubleValue(1.5), types.DoubleValue(2.5), types.DoubleValue(3.5)
					vals[2], vals[6] = types.DecimalValue(1, 2), types.DecimalValue(2, 2)
					changes[i] = Change{Key: []types.Value{types.BigIntValue(rnd.Int64N(100_000))}, Values: vals, EventTime: 1}
					if masked {
						changes[i].Mask = []bool{true, false, false, false, false, false, false, false, false, false}
					}
				}
				if err := s.Commit("accounts", changes); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// reportCPU reports the process's CPU time per operation (the
// collector's included), which the machine's other work does not
// inflate as it does the elapsed time. Call the function it returns at
// the end.
func reportCPU(b *testing.B) func() {
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	start := cpu()
	return func() { b.ReportMetric(float64((cpu()-start).Nanoseconds())/float64(b.N), "cpu-ns/op") }
}
