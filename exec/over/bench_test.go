package over

import (
	"runtime"
	"strconv"
	"testing"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/exec/agg"
	"github.com/sluicesql/sluice/internal/cputime"
	"github.com/sluicesql/sluice/state"
	"github.com/sluicesql/sluice/types"
)

// The benchmarks stream rows over 10k partitions in turn, ten rows per
// millisecond of event time (each partition gets a row a second), in
// batches of 1,024 rows with a watermark 1 s behind after each batch, and
// compute SUM(v), COUNT(*) and MAX(v) over the frame. The frames are full
// before the timer starts. They report rows/s (and rows per CPU second of
// the process, a steadier figure on a shared machine), the heap the state
// takes per partition, and the bytes of a checkpoint per partition.

func BenchmarkRows100(b *testing.B) { benchOver(b, true, 100, 100) }

func BenchmarkRange1Minute(b *testing.B) { benchOver(b, false, 60_000_000, 60) }

func benchOver(b *testing.B, rows bool, preceding int64, perPart int) {
	const parts = 10_000
	reg := agg.NewRegistry()
	var calls []agg.Call
	for _, name := range []string{"SUM", "COUNT", "MAX"} {
		f, err := reg.Lookup(name)
		if err != nil {
			b.Fatal(err)
		}
		args := []int{2}
		if name == "COUNT" {
			args = nil
		}
		var at []types.Type
		for range args {
			at = append(at, types.BigInt)
		}
		rt, err := f.ResultType(at)
		if err != nil {
			b.Fatal(err)
		}
		calls = append(calls, agg.Call{Func: f, Args: args, ArgTypes: at, Result: rt, Filter: -1})
	}
	keys := make([]types.Value, parts)
	for i := range keys {
		keys[i] = types.StringValue("user-" + strconv.Itoa(i))
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	st := state.NewMemory()
	o, err := New(Config{ID: "bench", Partition: []int{0}, TimeCol: 1, Rows: rows, Preceding: preceding,
		Calls: calls, Types: cols, Next: exec.Discard{}})
	if err != nil {
		b.Fatal(err)
	}
	if err := o.Open(&exec.Context{State: st}); err != nil {
		b.Fatal(err)
	}
	batch := types.NewBatch(1024, 3)
	x := uint64(1)
	row := 0
	feed := func(n int) {
		for n > 0 {
			batch.Reset()
			m := min(n, 1024)
			for range m {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				v := batch.AddRow(types.Insert, types.NoOrigin, 3)
				v[0] = keys[row%parts]
				v[1] = types.TimestampValue(int64(row) * 100)
				v[2] = types.IntValue(types.KindBigInt, int64(x%1000))
				row++
			}
			n -= m
			if err := o.Process(batch); err != nil {
				b.Fatal(err)
			}
			if err := o.Watermark(int64(row)*100 - 1_000_000); err != nil {
				b.Fatal(err)
			}
		}
	}
	feed(parts * (perPart + 2)) // full frames
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := float64(after.HeapAlloc-before.HeapAlloc) / parts
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cputime.Seconds()
	feed(b.N)
	cpu = cputime.Seconds() - cpu
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	if cpu > 0 {
		b.ReportMetric(float64(b.N)/cpu, "rows/cpu-s")
	}
	b.ReportMetric(heap, "heap-B/part")
	if err := o.Checkpoint(); err != nil {
		b.Fatal(err)
	}
	s, err := st.Store("bench")
	if err != nil {
		b.Fatal(err)
	}
	total, n := 0, 0
	if err := s.Scan(nil, func(k, v []byte) bool {
		total += len(k) + len(v)
		n++
		return true
	}); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(total)/parts, "ckpt-B/part")
}
