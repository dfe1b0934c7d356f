package kshuffle

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicesql/sluice/connector/memory"
	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/types"
)

// memOutput is an exec.Output that keeps the rows it gets.
type memOutput struct {
	mu   sync.Mutex
	rows []types.Row
}

func (m *memOutput) Open(*exec.Context) error { return nil }
func (m *memOutput) Process(b *types.Batch) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range b.Rows {
		m.rows = append(m.rows, types.CopyRow(r))
	}
	return nil
}
func (m *memOutput) Watermark(int64) error { return nil }
func (m *memOutput) SetIdle(bool) error    { return nil }
func (m *memOutput) Finish() error         { return nil }
func (m *memOutput) Close() error          { return nil }

// TestShuffle writes rows from three concurrent writer tasks through a
// four-partition topic and checks that every row arrives once, with its
// origin and values, each key in exactly one partition: the partition
// exec.HashExchange picks for it.
func TestShuffle(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"zstd", Options{}},
		{"lz4", Options{Compression: LZ4, BatchBytes: 2 << 10}},
		{"snappy", Options{Compression: Snappy, Linger: -1}},
		{"none", Options{Compression: NoCompression, BatchBytes: 512}},
		{"batch-zstd", Options{Compression: Zstd, CompressBatches: true}},
		{"row-per-record", Options{Compression: NoCompression, BatchBytes: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const writers, parts, perWriter, keys = 3, 4, 3000, 50
			brokers := newCluster(t)
			ctx := testContext(t)
			var wg sync.WaitGroup
			var ws []*Writer
			for w := 0; w < writers; w++ {
				o := tc.opts
				o.Topic, o.Partitions, o.Schema, o.Keys = "shuffle", parts, testSchema, []int{0}
				o.WriterID, o.Writers, o.Brokers = w, writers, brokers
				wr := openWriter(t, ctx, o)
				ws = append(ws, wr)
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < perWriter; i += 100 {
						var rows []types.Row
						for j := i; j < i+100; j++ {
							rows = append(rows, testRow(w, j, keys))
						}
						if err := wr.Process(batchOf(rows...)); err != nil {
							t.Error(err)
							return
						}
						if err := wr.Watermark(int64(i) * 1000); err != nil {
							t.Error(err)
							return
						}
					}
					if err := wr.Finish(); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			if t.Failed() {
				return
			}
			st := ws[0].Stats()
			if st.Rows != perWriter || st.DataRecords == 0 {
				t.Fatalf("writer 0 stats: %+v", st)
			}
			if tc.opts.BatchBytes == 1 && st.DataRecords != perWriter {
				t.Fatalf("BatchBytes 1 wrote %d records for %d rows", st.DataRecords, perWriter)
			}

			// Where exec.HashExchange sends each key.
			outs := make([]*memOutput, parts)
			hx := &exec.HashExchange{Keys: []int{0}}
			for p := range outs {
				outs[p] = &memOutput{}
				hx.Outputs = append(hx.Outputs, outs[p])
			}
			if err := hx.Open(&exec.Context{Ctx: ctx}); err != nil {
				t.Fatal(err)
			}
			want := map[types.Origin]types.Row{}
			for w := 0; w < writers; w++ {
				for i := 0; i < perWriter; i++ {
					r := testRow(w, i, keys)
					want[r.Origin] = r
					if err := hx.Process(batchOf(r)); err != nil {
						t.Fatal(err)
					}
				}
			}
			wantPart := map[string]int{}
			for p, o := range outs {
				for _, r := range o.rows {
					wantPart[r.Vals[0].Str()] = p
				}
			}

			src, err := NewSource(SourceOptions{Topic: "shuffle", Partitions: parts, Schema: testSchema,
				Writers: writers, Bounded: true, Brokers: brokers})
			if err != nil {
				t.Fatal(err)
			}
			seen := map[types.Origin]bool{}
			for p := 0; p < parts; p++ {
				r, err := src.OpenReader(ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				rows, events, _ := drain(t, ctx, r, 256)
				_ = r.Close()
				if len(events) == 0 || events[len(events)-1] != (event{wm: exec.MaxWatermark}) {
					t.Errorf("partition %d: watermarks %v do not end at max", p, events)
				}
				last := map[int32]int64{}
				for _, row := range rows {
					w, ok := want[row.Origin]
					if !ok {
						t.Fatalf("partition %d: unexpected row %+v", p, row)
					}
					if seen[row.Origin] {
						t.Fatalf("partition %d: row %+v twice", p, row.Origin)
					}
					seen[row.Origin] = true
					sameRow(t, row, w)
					if k := row.Vals[0].Str(); wantPart[k] != p {
						t.Fatalf("key %s in partition %d, exec.HashExchange sends it to %d", k, p, wantPart[k])
					}
					if row.Origin.Offset <= last[row.Origin.Part] {
						t.Fatalf("partition %d: origin %+v after offset %d", p, row.Origin, last[row.Origin.Part])
					}
					last[row.Origin.Part] = row.Origin.Offset
				}
			}
			if len(seen) != len(want) {
				t.Fatalf("read %d rows, wrote %d", len(seen), len(want))
			}
		})
	}
}

// TestWatermarks checks that a partition's watermark is the minimum over
// the writers, leaving out idle and finished ones, never decreases, and
// that the partition ends once every writer has ended.
func TestWatermarks(t *testing.T) {
	const parts = 2
	brokers := newCluster(t)
	ctx := testContext(t)
	ws := make([]*Writer, 3)
	for i := range ws {
		ws[i] = openWriter(t, ctx, Options{Topic: "wm", Partitions: parts, Schema: testSchema, Keys: []int{1},
			WriterID: i, Writers: len(ws), Brokers: brokers, Linger: time.Hour})
	}
	// Each step is acknowledged before the next, so that the topic holds
	// them in this order.
	row := 0
	steps := []func(){
		func() { must(t, ws[0].Process(batchOf(testRow(0, row, 10), testRow(0, row+1, 10)))); row += 2 },
		func() { must(t, ws[0].Watermark(100)) },
		func() { must(t, ws[1].Watermark(50)) },
		func() { must(t, ws[1].Watermark(40)) }, // older: ignored
		func() { must(t, ws[2].Process(batchOf(testRow(2, 0, 10)))) },
		func() { must(t, ws[2].Watermark(70)) },  // -> 50
		func() { must(t, ws[1].SetIdle(true)) },  // -> 70
		func() { must(t, ws[2].Finish()) },       // -> 100
		func() { must(t, ws[0].SetIdle(true)) },  // -> idle, held at 100
		func() { must(t, ws[1].SetIdle(false)) }, // active, 50 < 100: held
		func() { must(t, ws[1].Watermark(200)) }, // w0 idle: -> 200
		func() { must(t, ws[0].Finish()) },
		func() { must(t, ws[1].Finish()) }, // -> max, then EOF
	}
	for i, step := range steps {
		step()
		for _, w := range ws {
			if err := w.Flush(); err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
		}
	}
	src, err := NewSource(SourceOptions{Topic: "wm", Partitions: parts, Schema: testSchema, Writers: len(ws), Brokers: brokers})
	if err != nil {
		t.Fatal(err)
	}
	want := []event{{50, false}, {70, false}, {100, false}, {100, true}, {100, false}, {200, false}, {exec.MaxWatermark, false}}
	total := 0
	for p := 0; p < parts; p++ {
		r, err := src.OpenReader(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		rows, events, at := drain(t, ctx, r, 100)
		_ = r.Close()
		if !slices.Equal(events, want) {
			t.Errorf("partition %d: watermarks %v, want %v", p, events, want)
		}
		// Rows written before the first watermark change arrive before it.
		if len(at) > 0 && at[0] != len(rows) {
			t.Errorf("partition %d: %d of %d rows before the first watermark", p, at[0], len(rows))
		}
		total += len(rows)
	}
	if total != 3 {
		t.Fatalf("read %d rows, wrote 3", total)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestReplay reads half a partition, keeps the reader's checkpoint as a
// consumer would commit it, and restarts from it: the rows after it come
// again, identical, the watermark is restored, and dropping rows whose
// origin offset is not above what was kept — the stateful operators'
// rule — gives every row exactly once.
func TestReplay(t *testing.T) {
	const n = 2000
	brokers := newCluster(t)
	ctx := testContext(t)
	w := openWriter(t, ctx, Options{Topic: "replay", Partitions: 1, Schema: testSchema, Keys: []int{0},
		WriterID: 0, Writers: 1, Brokers: brokers, BatchBytes: 4 << 10, Linger: -1})
	var all []types.Row
	for i := 0; i < n; i += 50 {
		var rows []types.Row
		for j := i; j < i+50; j++ {
			rows = append(rows, testRow(0, j, 100))
		}
		all = append(all, rows...)
		must(t, w.Process(batchOf(rows...)))
		must(t, w.Watermark(int64(i+50)*1000))
	}
	must(t, w.Finish())

	src, err := NewSource(SourceOptions{Topic: "replay", Partitions: 1, Schema: testSchema, Writers: 1, Brokers: brokers})
	if err != nil {
		t.Fatal(err)
	}
	r, err := src.OpenReader(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	var first []types.Row
	var lastWM int64 = exec.MinWatermark
	b := types.NewBatch(37, len(testSchema))
	for len(first) < n/2 {
		b.Reset()
		must(t, r.Read(ctx, b, 37)) // 37 rows: stops inside a record
		for _, row := range b.Rows {
			first = append(first, types.CopyRow(row))
		}
		if wm, _, ok := r.Watermark(); ok {
			lastWM = wm
		}
	}
	cp := r.Checkpoint()
	_ = r.Close() // the reader dies here
	meta, err := cp.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var restored Checkpoint
	must(t, restored.UnmarshalBinary(meta))

	src2, err := NewSource(SourceOptions{Topic: "replay", Partitions: 1, Schema: testSchema, Writers: 1, Brokers: brokers,
		Start: func(int) Checkpoint { return restored }})
	if err != nil {
		t.Fatal(err)
	}
	r2, err := src2.OpenReader(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if wm, _, ok := r2.Watermark(); !ok || wm != lastWM {
		t.Errorf("restarted reader's watermark = %d, %v; want %d as before", wm, ok, lastWM)
	}
	again, _, _ := drain(t, ctx, r2, 100)
	_ = r2.Close()

	// The replay starts at or before where the first reader stopped, and
	// from there the rows are those written, in order.
	k := len(all) - len(again)
	if k < 0 || k > len(first) || len(first)-k > 50 {
		t.Fatalf("replayed %d rows after reading %d of %d", len(again), len(first), len(all))
	}
	for i, row := range again {
		sameRow(t, row, all[k+i])
	}
	// Dedup by origin offset, as stateful operators do.
	var out []types.Row
	high := map[int32]int64{}
	for _, row := range append(first, again...) {
		if row.Origin.Offset <= high[row.Origin.Part] {
			continue
		}
		high[row.Origin.Part] = row.Origin.Offset
		out = append(out, row)
	}
	if len(out) != len(all) {
		t.Fatalf("after dedup %d rows, wrote %d", len(out), len(all))
	}
	for i := range out {
		sameRow(t, out[i], all[i])
	}
}

// TestLinger checks that rows a writer only buffered are sent after the
// linger time, with no further call.
func TestLinger(t *testing.T) {
	brokers := newCluster(t)
	ctx := testContext(t)
	w := openWriter(t, ctx, Options{Topic: "linger", Partitions: 2, Schema: testSchema, Keys: []int{0},
		WriterID: 0, Writers: 1, Brokers: brokers, Linger: 5 * time.Millisecond})
	must(t, w.Process(batchOf(testRow(0, 0, 10), testRow(0, 1, 10), testRow(0, 2, 10))))
	must(t, w.Watermark(1))
	src, err := NewSource(SourceOptions{Topic: "linger", Partitions: 2, Schema: testSchema, Writers: 1, Brokers: brokers})
	if err != nil {
		t.Fatal(err)
	}
	got, wms := 0, 0
	for p := 0; p < 2; p++ {
		r, err := src.OpenReader(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		b := types.NewBatch(8, len(testSchema))
		for { // until the watermark, which follows the rows
			must(t, r.Read(ctx, b, 8))
			if wm, _, ok := r.Watermark(); ok && wm == 1 {
				wms++
				break
			}
		}
		got += b.Len()
		_ = r.Close()
	}
	if got != 3 || wms != 2 {
		t.Fatalf("read %d rows and %d watermarks, want 3 and 2", got, wms)
	}
}

// TestExecTasks runs the shuffle between exec source tasks: three tasks of
// a memory source write through Writers, four tasks read the Source.
func TestExecTasks(t *testing.T) {
	const writers, parts, perPart = 3, 4, 500
	brokers := newCluster(t)
	ctx := testContext(t)
	in := make([][]types.Row, writers)
	for w := range in {
		for i := 0; i < perPart; i++ {
			in[w] = append(in[w], testRow(w, i, 40))
		}
	}
	up := memory.NewBounded(in...)
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wr, err := NewWriter(Options{Topic: "tasks", Partitions: parts, Schema: testSchema, Keys: []int{0},
			WriterID: w, Writers: writers, Brokers: brokers})
		if err != nil {
			t.Fatal(err)
		}
		wa := &exec.WatermarkAssigner{Expr: func(v []types.Value) (types.Value, error) { return v[2], nil }, Next: wr}
		must(t, wa.Open(&exec.Context{Ctx: ctx, Now: func() int64 { return 0 }}))
		task := &exec.SourceTask{Table: "up", Source: up, Part: w, Head: wa, Out: wr, Assigner: wa, BatchSize: 64}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer wa.Close()
			if err := task.Run(ctx); err != nil {
				t.Error(err)
			}
		}()
	}
	src, err := NewSource(SourceOptions{Topic: "tasks", Partitions: parts, Schema: testSchema, Writers: writers,
		Bounded: true, Brokers: brokers})
	if err != nil {
		t.Fatal(err)
	}
	outs := make([]*memOutput, parts)
	for p := 0; p < parts; p++ {
		outs[p] = &memOutput{}
		task := &exec.SourceTask{Table: "shuffle", Source: src, Part: p, Head: outs[p], Out: outs[p]}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := task.Run(ctx); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	seen := map[types.Origin]bool{}
	keyPart := map[string]int{}
	for p, o := range outs {
		for _, r := range o.rows {
			if seen[r.Origin] {
				t.Fatalf("row %+v twice", r.Origin)
			}
			seen[r.Origin] = true
			sameRow(t, r, testRow(int(r.Origin.Part), int(r.Origin.Offset-1), 40))
			k := r.Vals[0].Str()
			if q, ok := keyPart[k]; ok && q != p {
				t.Fatalf("key %s in partitions %d and %d", k, q, p)
			}
			keyPart[k] = p
		}
	}
	if len(seen) != writers*perPart {
		t.Fatalf("read %d rows, wrote %d", len(seen), writers*perPart)
	}
}

// TestSharedClientNeedsManualPartitioner checks that a client that picks
// partitions itself is caught rather than scattering keys.
func TestSharedClientNeedsManualPartitioner(t *testing.T) {
	brokers := newCluster(t)
	ctx := testContext(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	w := openWriter(t, ctx, Options{Topic: "shared", Partitions: 4, Schema: testSchema, Keys: []int{0},
		WriterID: 0, Writers: 1, Client: cl})
	var rows []types.Row
	for i := 0; i < 40; i++ {
		rows = append(rows, testRow(0, i, 40))
	}
	must(t, w.Process(batchOf(rows...)))
	if err := w.Finish(); err == nil {
		t.Fatal("Finish with a client that partitions by itself: no error")
	}
}

func TestOptionsValidate(t *testing.T) {
	for i, o := range []Options{
		{},
		{Topic: "t", Partitions: 1, Writers: 1, WriterID: 1, Brokers: []string{"x"}},
		{Topic: "t", Partitions: 1, Writers: 1, Keys: []int{2}, Schema: testSchema[:1], Brokers: []string{"x"}},
		{Topic: "t", Partitions: 1, Writers: 1, CompressBatches: true, Client: &kgo.Client{}},
		{Topic: "t", Partitions: 1, Writers: 1, Compression: 42, Brokers: []string{"x"}},
	} {
		if _, err := NewWriter(o); err == nil {
			t.Errorf("options %d: no error", i)
		}
	}
	if _, err := NewSource(SourceOptions{Topic: "t"}); err == nil {
		t.Error("source options: no error")
	}
	for _, s := range []string{"none", "ZSTD", "lz4", "snappy"} {
		c, err := ParseCompression(s)
		if err != nil || !strings.EqualFold(c.String(), s) {
			t.Errorf("ParseCompression(%q) = %v, %v", s, c, err)
		}
	}
	if _, err := ParseCompression("gzip"); err == nil {
		t.Error("ParseCompression(gzip): no error")
	}
}

// TestWatermarkInterval checks that frequent watermarks become few control
// records, and that the last one still arrives.
func TestWatermarkInterval(t *testing.T) {
	const parts = 3
	brokers := newCluster(t)
	ctx := testContext(t)
	w := openWriter(t, ctx, Options{Topic: "interval", Partitions: parts, Schema: testSchema, Keys: []int{0},
		WriterID: 0, Writers: 1, Brokers: brokers, Linger: time.Millisecond, WatermarkInterval: time.Hour})
	for i := 1; i <= 1000; i++ {
		must(t, w.Process(batchOf(testRow(0, i, 10))))
		must(t, w.Watermark(int64(i)))
	}
	must(t, w.Flush())
	// The first watermark may go out with a linger flush; every later one
	// waits for the interval, until Flush sends the last.
	if n := w.Stats().ControlRecords; n > 2*parts {
		t.Fatalf("1000 watermarks took %d control records, want at most %d", n, 2*parts)
	}
	src, err := NewSource(SourceOptions{Topic: "interval", Partitions: parts, Schema: testSchema, Writers: 1, Brokers: brokers})
	if err != nil {
		t.Fatal(err)
	}
	for p := 0; p < parts; p++ {
		r, err := src.OpenReader(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		b := types.NewBatch(64, len(testSchema))
		for {
			b.Reset()
			must(t, r.Read(ctx, b, 64))
			if wm, _, ok := r.Watermark(); ok && wm == 1000 {
				break
			}
		}
		_ = r.Close()
	}
}

// TestBytesFloor checks the floor: merged, compressed, the shuffle
// puts at most a quarter of the bytes per row on the broker that one
// message per row does.
func TestBytesFloor(t *testing.T) {
	const rows = 16 * 1024
	brokers := newCluster(t)
	ctx := testContext(t)
	stored := map[string]int64{}
	for _, tc := range []struct {
		topic string
		opts  Options
	}{
		{"per-row", Options{BatchBytes: 1, Compression: NoCompression}},
		{"merged", Options{}},
	} {
		o := tc.opts
		o.Topic, o.Partitions, o.Schema, o.Keys = tc.topic, 4, bidSchema, []int{0}
		o.WriterID, o.Writers, o.Brokers = 0, 1, brokers
		w := openWriter(t, ctx, o)
		gen := newBidGen()
		b := types.NewBatch(1024, len(bidSchema))
		for i := 0; i < rows/1024; i++ {
			gen.fill(b, 1024)
			must(t, w.Process(b))
			must(t, w.Watermark(int64(i)))
		}
		must(t, w.Finish())
		stored[tc.topic] = storedBytes(t, ctx, brokers, tc.topic)
	}
	perRow, merged := float64(stored["per-row"])/rows, float64(stored["merged"])/rows
	t.Logf("bytes/row: one message per row %.1f, merged and compressed %.1f", perRow, merged)
	if merged > perRow/4 {
		t.Fatalf("merged shuffle stores %.1f bytes/row, more than a quarter of %.1f", merged, perRow)
	}
}
