package join

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/exec/window"
	"github.com/sluicesql/sluice/internal/cputime"
	"github.com/sluicesql/sluice/types"
)

// BenchmarkRegularJoin: 100k keys on each side. The right side holds one
// row per key (loaded first); the left side streams rows over the keys in
// turn, each matching one right row and kept in the state (a regular join
// keeps every row), in batches of 1,024. A row of either
// side is an input row. It reports rows/s and the state's bytes per key
// (both sides' rows, heap measured after the load).
func BenchmarkRegularJoin(b *testing.B) {
	const keys = 100_000
	o, err := New(Config{Kind: Inner, LeftKeys: []int{0}, RightKeys: []int{0}, Left: twoCols, Right: twoCols,
		Next: exec.Discard{}})
	if err != nil {
		b.Fatal(err)
	}
	if err := o.Open(&exec.Context{}); err != nil {
		b.Fatal(err)
	}
	batch := types.NewBatch(1024, 2)
	payloads := make([]types.Value, 1021) // prime: (key, payload) pairs repeat rarely
	for i := range payloads {
		payloads[i] = types.StringValue(fmt.Sprintf("payload-%010d", i))
	}
	fill := func(first, n int) {
		batch.Reset()
		for i := first; i < first+n; i++ {
			v := batch.AddRow(types.Insert, types.Origin{Part: -1}, 2)
			v[0], v[1] = types.IntValue(types.KindInt, int64(i%keys)), payloads[i%len(payloads)]
		}
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := 0; i < keys; i += 1024 {
		fill(i, min(1024, keys-i))
		if err := o.ProcessInput(1, batch); err != nil {
			b.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perKey := float64(after.HeapAlloc-before.HeapAlloc) / keys
	b.ResetTimer()
	for i := 0; i < b.N; i += 1024 {
		fill(i, min(1024, b.N-i))
		if err := o.ProcessInput(0, batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(perKey, "state-B/key")
}

// BenchmarkNullAwareAnti: x NOT IN (SELECT y ...) over nullable columns
// without another key, so one task: 100k right rows (the even keys of
// 200k, no NULL), then left rows streaming over the 200k keys (half of
// them match), one in ten NULL (a NULL matches any right row), in
// batches of 1,024. Rows/s of the left side, all kept in the state.
func BenchmarkNullAwareAnti(b *testing.B) {
	const keys = 200_000
	o, err := New(Config{Kind: Anti, LeftKeys: []int{0}, RightKeys: []int{0}, Left: twoCols, Right: twoCols,
		NullAware: true, Next: exec.Discard{}})
	if err != nil {
		b.Fatal(err)
	}
	if err := o.Open(&exec.Context{}); err != nil {
		b.Fatal(err)
	}
	batch := types.NewBatch(1024, 2)
	payload := types.StringValue("payload")
	fill := func(first, n, step int, nulls bool) {
		batch.Reset()
		for i := first; i < first+n; i++ {
			v := batch.AddRow(types.Insert, types.Origin{Part: -1}, 2)
			v[0], v[1] = types.IntValue(types.KindInt, int64(i*step%keys)), payload
			if nulls && i%10 == 0 {
				v[0] = types.Value{}
			}
		}
	}
	for i := 0; i < keys/2; i += 1024 {
		fill(i, min(1024, keys/2-i), 2, false)
		if err := o.ProcessInput(1, batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += 1024 {
		fill(i, min(1024, b.N-i), 1, true)
		if err := o.ProcessInput(0, batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkIntervalJoin: two streams over 10k keys, a row on each side
// every millisecond of event time, joined within ±1 s, the watermark
// following every batch of 1,024 rows (512 per side).
func BenchmarkIntervalJoin(b *testing.B) {
	const keys = 10_000
	o, err := NewInterval(IntervalConfig{Config: Config{Kind: Inner, LeftKeys: []int{0}, RightKeys: []int{0},
		Left: timed, Right: timed, Next: exec.Discard{}}, LeftTime: 1, RightTime: 1, Lower: -1_000_000, Upper: 1_000_000})
	if err != nil {
		b.Fatal(err)
	}
	if err := o.Open(&exec.Context{}); err != nil {
		b.Fatal(err)
	}
	batch := types.NewBatch(512, 2)
	b.ResetTimer()
	var ts int64
	for i := 0; i < b.N; i += 1024 {
		for side := range 2 {
			batch.Reset()
			for j := range 512 {
				v := batch.AddRow(types.Insert, types.Origin{Part: -1}, 2)
				n := i/2 + j
				v[0], v[1] = types.IntValue(types.KindInt, int64((n*7919)%keys)), types.TimestampValue((ts+int64(j))*1000)
			}
			if err := o.ProcessInput(side, batch); err != nil {
				b.Fatal(err)
			}
		}
		ts += 512
		if err := o.Watermark((ts - 100) * 1000); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkTemporalJoin: orders over 100k currencies (keys), each priced
// at the rate valid at its time. Per batch of 1,024 rows: 896 orders and
// 128 new rate versions, a row per millisecond of event time on each
// side; the watermark follows every batch, so each order waits for about
// one batch and old versions are pruned. The versioned table is first
// loaded with one version per key.
func BenchmarkTemporalJoin(b *testing.B) {
	const keys = 100_000
	o, err := NewTemporal(TemporalConfig{Config: Config{Kind: Left, LeftKeys: []int{0}, RightKeys: []int{0},
		Left: timed, Right: versioned, Next: exec.Discard{}}, LeftTime: 1, RightTime: 1})
	if err != nil {
		b.Fatal(err)
	}
	if err := o.Open(&exec.Context{}); err != nil {
		b.Fatal(err)
	}
	rates := types.NewBatch(1024, 3)
	for k := 0; k < keys; k += 1024 {
		rates.Reset()
		for j := k; j < min(k+1024, keys); j++ {
			v := rates.AddRow(types.Insert, types.Origin{Part: -1}, 3)
			v[0], v[1], v[2] = types.IntValue(types.KindInt, int64(j)), types.TimestampValue(0), types.IntValue(types.KindInt, 1)
		}
		if err := o.ProcessInput(1, rates); err != nil {
			b.Fatal(err)
		}
	}
	orders := types.NewBatch(896, 2)
	var ts int64 = 1
	n := 0
	b.ResetTimer()
	cpu := cputime.Seconds()
	for i := 0; i < b.N; i += 1024 {
		orders.Reset()
		for j := range 896 {
			v := orders.AddRow(types.Insert, types.Origin{Part: -1}, 2)
			v[0], v[1] = types.IntValue(types.KindInt, int64((n*7919)%keys)), types.TimestampValue((ts+int64(j))*1000)
			n++
		}
		if err := o.ProcessInput(0, orders); err != nil {
			b.Fatal(err)
		}
		rates.Reset()
		for j := range 128 {
			v := rates.AddRow(types.Insert, types.Origin{Part: -1}, 3)
			v[0], v[1], v[2] = types.IntValue(types.KindInt, int64((n*31+j*7)%keys)), types.TimestampValue((ts+int64(j)*7)*1000), types.IntValue(types.KindInt, int64(j))
		}
		if err := o.ProcessInput(1, rates); err != nil {
			b.Fatal(err)
		}
		ts += 896
		if err := o.Watermark((ts - 1) * 1000); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	if c := cputime.Seconds() - cpu; c > 0 {
		b.ReportMetric(float64(b.N)/c, "rows/cpu-s")
	}
	kept := 0
	for _, l := range o.versions {
		kept += len(l.vs)
	}
	b.ReportMetric(float64(kept)/keys, "versions/key")
}

// sideInput feeds the batches of a single-input chain into one side of a
// join.
type sideInput struct {
	exec.Passthrough
	side int
	join interface {
		ProcessInput(int, *types.Batch) error
	}
}

func (s *sideInput) Open(*exec.Context) error     { return nil }
func (s *sideInput) Process(b *types.Batch) error { return s.join.ProcessInput(s.side, b) }
func (s *sideInput) Watermark(int64) error        { return nil }
func (s *sideInput) Finish() error                { return nil }
func (s *sideInput) Close() error                 { return nil }

// BenchmarkWindowJoin: an inner window join of two streams over 10k keys
// in 1-minute tumbling windows. Each side has a row every 6 ms of event
// time, its key cycling through the 10k keys, so that each window holds
// one row per key and side and every left row matches one right row. Rows
// go through each side's TUMBLE assigner (the window TVF) in batches of
// 512 per side; the watermark follows every 1,024 rows. A row of either
// side is an input row. Beside rows/s (wall clock) it reports rows per
// CPU second of the process, a steadier figure on a shared machine.
func BenchmarkWindowJoin(b *testing.B) {
	const keys = 10_000
	cols := []types.Type{types.Int, types.String, types.Timestamp(3)}
	out := []types.Type{types.Int, types.String, types.Timestamp(3), types.Timestamp(3), types.Timestamp(3), types.Timestamp(3)}
	o, err := NewWindow(WindowConfig{Config: Config{Kind: Inner, LeftKeys: []int{0}, RightKeys: []int{0},
		Left: out, Right: out, Next: exec.Discard{}}, LeftStart: 3, LeftEnd: 4, RightStart: 3, RightEnd: 4})
	if err != nil {
		b.Fatal(err)
	}
	if err := o.Open(&exec.Context{}); err != nil {
		b.Fatal(err)
	}
	var tvf [2]exec.Operator
	for side := range 2 {
		a, err := window.NewAssign(window.AssignConfig{Spec: window.Spec{Kind: window.Tumble, Size: 60_000_000}, TimeCol: 2,
			Next: &sideInput{side: side, join: o}})
		if err != nil {
			b.Fatal(err)
		}
		if err := a.Open(&exec.Context{}); err != nil {
			b.Fatal(err)
		}
		tvf[side] = a
	}
	payloads := make([]types.Value, 1021)
	for i := range payloads {
		payloads[i] = types.StringValue(fmt.Sprintf("payload-%010d", i))
	}
	batch := types.NewBatch(512, len(cols))
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cputime.Seconds()
	var n int64 // rows per side so far
	for i := 0; i < b.N; i += 1024 {
		for side := range 2 {
			batch.Reset()
			for j := range int64(512) {
				v := batch.AddRow(types.Insert, types.Origin{Part: -1}, len(cols))
				k := n + j
				v[0], v[1], v[2] = types.IntValue(types.KindInt, (k*7919)%keys), payloads[k%1021], types.TimestampValue(k*6000)
			}
			if err := tvf[side].Process(batch); err != nil {
				b.Fatal(err)
			}
		}
		n += 512
		if err := o.Watermark(n*6000 - 1); err != nil {
			b.Fatal(err)
		}
	}
	if err := o.Watermark(exec.MaxWatermark); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	if c := cputime.Seconds() - cpu; c > 0 {
		b.ReportMetric(float64(b.N)/c, "rows/cpu-s")
	}
}
