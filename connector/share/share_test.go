package share

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/memory"
	"github.com/sluicesql/sluice/types"
)

// counted is a source that counts the readers opened and closed over it
// and can make them fail; with gen, it passes for a generator.
type counted struct {
	connector.Source
	opens, closes atomic.Int64
	fail          atomic.Pointer[error]
	gen           bool
}

// Generates implements connector.Generator.
func (c *counted) Generates() bool { return c.gen }

func (c *counted) Open(ctx context.Context, p int) (connector.Reader, error) {
	r, err := c.Source.Open(ctx, p)
	if err != nil {
		return nil, err
	}
	c.opens.Add(1)
	return &countedReader{Reader: r, c: c}, nil
}

// OriginEpoch makes offsets from 2^20 on a later epoch of the log, as
// a Kafka partition's that was replaced (kafka.Source.OriginEpoch).
func (c *counted) OriginEpoch(offset int64) int64 { return offset >> 20 }

type countedReader struct {
	connector.Reader
	c *counted
}

func (r *countedReader) Read(ctx context.Context, b *types.Batch, max int) error {
	if err := r.c.fail.Load(); err != nil {
		return *err
	}
	return r.Reader.Read(ctx, b, max)
}

func (r *countedReader) Close() error {
	r.c.closes.Add(1)
	return r.Reader.Close()
}

var table = connector.Table{Name: "t", Schema: types.Schema{Columns: []types.Column{{Name: "v", Type: types.Type{Kind: types.KindBigInt}}}},
	Options: connector.Options{"connector": "memory-test"}}

// fixture is a registry over one unbounded memory source of one
// partition.
type fixture struct {
	reg *Registry
	mem *memory.Source
	src *counted
	log *bytes.Buffer
	mu  sync.Mutex
	// whole opens as a changelog's scan (see Registry.Wrap).
	whole bool
}

func newFixture(t *testing.T, opts Options) *fixture {
	f := &fixture{mem: memory.NewUnbounded(1), log: &bytes.Buffer{}}
	f.src = &counted{Source: f.mem}
	opts.Logf = func(format string, args ...any) {
		f.mu.Lock()
		defer f.mu.Unlock()
		fmt.Fprintf(f.log, format+"\n", args...)
	}
	f.reg = NewRegistry(opts)
	t.Cleanup(func() {
		if n := len(f.reg.Sources()); n != 0 {
			t.Errorf("%d hubs left at the end: %+v", n, f.reg.Sources())
		}
		if o, c := f.src.opens.Load(), f.src.closes.Load(); o != c {
			t.Errorf("%d readers opened, %d closed", o, c)
		}
	})
	return f
}

func (f *fixture) logged() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.log.String()
}

// push appends rows with values from..to-1 (origin offsets from+1...).
func (f *fixture) push(from, to int) {
	for i := from; i < to; i++ {
		f.mem.Push(0, types.Row{Kind: types.Insert, Vals: []types.Value{types.BigIntValue(int64(i))}})
	}
}

// open opens partition 0 for job, resuming after offset when resume.
func (f *fixture) open(t *testing.T, job string, resume bool, offset int64) connector.Reader {
	t.Helper()
	s, err := f.reg.Wrap(job, table, f.src, f.whole)
	if err != nil {
		t.Fatal(err)
	}
	var r connector.Reader
	if resume {
		r, err = s.(connector.Resumer).OpenAfter(context.Background(), 0, offset)
	} else {
		r, err = s.Open(context.Background(), 0)
	}
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// read reads n rows from r and returns their values, checking that
// each row's origin offset is its value + 1 (as pushed).
func read(t *testing.T, r connector.Reader, n int) []int64 {
	t.Helper()
	var out []int64
	b := types.NewBatch(16, 1)
	deadline := time.Now().Add(30 * time.Second)
	for len(out) < n {
		if time.Now().After(deadline) {
			t.Fatalf("read %d rows of %d: %v", len(out), n, out)
		}
		b.Reset()
		if err := r.Read(context.Background(), b, n-len(out)); err != nil {
			t.Fatalf("read: %v", err)
		}
		for _, row := range b.Rows {
			v := row.Vals[0].Int()
			if row.Origin.Offset != v+1 || row.Origin.Part != 0 {
				t.Fatalf("row %d has origin %+v", v, row.Origin)
			}
			out = append(out, v)
		}
	}
	return out
}

// drain reads r until a read gives nothing, and returns what it read.
func drain(t *testing.T, r connector.Reader) []int64 {
	t.Helper()
	var out []int64
	b := types.NewBatch(16, 1)
	for {
		b.Reset()
		if err := r.Read(context.Background(), b, 16); err != nil {
			t.Fatalf("read: %v", err)
		}
		if len(b.Rows) == 0 {
			return out
		}
		for _, row := range b.Rows {
			out = append(out, row.Vals[0].Int())
		}
	}
}

func seq(from, to int) []int64 {
	var out []int64
	for i := from; i < to; i++ {
		out = append(out, int64(i))
	}
	return out
}

// Two jobs read one partition through one reader: both get every row,
// with the origins the reader gave them, and the reader was opened once.
func TestShareOneReader(t *testing.T) {
	f := newFixture(t, Options{})
	a := f.open(t, "a", false, 0)
	b := f.open(t, "b", false, 0)
	f.push(0, 100)
	if got := read(t, a, 100); !slices.Equal(got, seq(0, 100)) {
		t.Errorf("a read %v", got)
	}
	if got := read(t, b, 100); !slices.Equal(got, seq(0, 100)) {
		t.Errorf("b read %v", got)
	}
	infos := f.reg.Sources()
	if len(infos) != 1 {
		t.Fatalf("sources %+v", infos)
	}
	in := infos[0]
	if in.Table != "t" || !slices.Equal(in.Jobs, []string{"a", "b"}) || in.Subscribers != 2 || in.Readers != 1 || in.Opens != 1 || in.RowsRead != 100 {
		t.Errorf("info %+v", in)
	}
	if n := f.src.opens.Load(); n != 1 {
		t.Errorf("%d readers opened, want 1", n)
	}
	if !strings.Contains(f.logged(), "shared source t: job b reads it through the reader it shares with a") {
		t.Errorf("log:\n%s", f.logged())
	}
	a.Close()
	if !strings.Contains(f.logged(), "shared source t: job a no longer reads it; b read on") {
		t.Errorf("log:\n%s", f.logged())
	}
	f.push(100, 110)
	if got := read(t, b, 10); !slices.Equal(got, seq(100, 110)) {
		t.Errorf("b read %v after a left", got)
	}
	if n := f.src.closes.Load(); n != 0 {
		t.Errorf("the reader closed while b reads it")
	}
	b.Close()
	if n := f.src.closes.Load(); n != 1 {
		t.Errorf("%d readers closed after the last job left, want 1", n)
	}
}

// A job attached to a generator while another reads gets the rows read
// after it attached, from the hub's position on.
func TestShareAttachAtPosition(t *testing.T) {
	f := newFixture(t, Options{})
	f.src.gen = true
	a := f.open(t, "a", false, 0)
	defer a.Close()
	f.push(0, 10)
	if got := read(t, a, 10); !slices.Equal(got, seq(0, 10)) {
		t.Fatalf("a read %v", got)
	}
	b := f.open(t, "b", false, 0)
	defer b.Close()
	f.push(10, 20)
	if got := read(t, a, 10); !slices.Equal(got, seq(10, 20)) {
		t.Errorf("a read %v", got)
	}
	if got := read(t, b, 10); !slices.Equal(got, seq(10, 20)) {
		t.Errorf("b read %v", got)
	}
}

// The hub goes at the pace of its slowest subscriber and drops nothing:
// while one does not read, the other gets no more than the queues hold;
// once it reads, both get every row in order. A subscriber that leaves
// holds no one back.
func TestShareBackPressure(t *testing.T) {
	const queue = 2
	f := newFixture(t, Options{BatchSize: 1, Queue: queue})
	slow := f.open(t, "slow", false, 0)
	fast := f.open(t, "fast", false, 0)
	defer fast.Close()
	f.push(0, 50)
	got := drain(t, fast)
	// Batches of one row: the slow one's queue, plus the one the hub
	// waits to hand it, plus the one it reads meanwhile.
	if len(got) > queue+2 || f.reg.Sources()[0].RowsRead > queue+2 {
		t.Errorf("the fast subscriber read %d rows, the hub %d, while the slow one read none (queue %d)",
			len(got), f.reg.Sources()[0].RowsRead, queue)
	}
	rest := make(chan []int64)
	go func() { rest <- read(t, fast, 50-len(got)) }()
	if s := read(t, slow, 20); !slices.Equal(s, seq(0, 20)) {
		t.Errorf("slow read %v", s)
	}
	slow.Close() // the slow one leaves: the fast one reads on alone
	got = append(got, <-rest...)
	if !slices.Equal(got, seq(0, 50)) {
		t.Errorf("fast read %v", got)
	}
}

// A batch's memory is not read into again while a subscriber may still
// hold its rows: each subscriber checks, before it reads again, that the
// rows it got last still hold what their origins say (and the race
// detector sees no write under them).
func TestShareBatchesNotReused(t *testing.T) {
	const n = 20000
	f := newFixture(t, Options{BatchSize: 7, Queue: 1})
	var wg sync.WaitGroup
	for _, job := range []string{"a", "b", "c"} {
		r := f.open(t, job, false, 0)
		wg.Go(func() {
			defer r.Close()
			b := types.NewBatch(5, 1)
			var next int64
			for next < n {
				for _, row := range b.Rows {
					if row.Vals[0].Int() != row.Origin.Offset-1 {
						t.Errorf("job %s: a row of offset %d holds %d", job, row.Origin.Offset, row.Vals[0].Int())
						return
					}
				}
				b.Reset()
				if err := r.Read(context.Background(), b, 5); err != nil {
					t.Error(err)
					return
				}
				for _, row := range b.Rows {
					if row.Vals[0].Int() != next {
						t.Errorf("job %s: read %d, want %d", job, row.Vals[0].Int(), next)
						return
					}
					next++
				}
			}
		})
	}
	f.push(0, n)
	wg.Wait()
}

// A resumed job attaches at once when the hub is at its offset;
// otherwise it reads the partition on its own, from its offset on, until
// the hub's last row is among those it has just read, and then through
// the hub: it loses nothing and gets nothing twice.
func TestShareResume(t *testing.T) {
	f := newFixture(t, Options{})
	a := f.open(t, "a", false, 0)
	defer a.Close()
	f.push(0, 10)
	read(t, a, 10) // the hub is at offset 10
	behind := f.open(t, "behind", true, 5)
	defer behind.Close()
	if !strings.Contains(f.logged(), "job behind reads partition 0 on its own, from after offset 5, until it reaches the shared reader (at offset 10)") {
		t.Errorf("log:\n%s", f.logged())
	}
	got := read(t, behind, 5) // through offset 10, where it joins
	at := f.open(t, "at", true, 10)
	defer at.Close()
	ahead := f.open(t, "ahead", true, 13)
	defer ahead.Close()
	// An offset of a later epoch of the log is no position in the hub's.
	later := f.open(t, "later", true, 1<<20+5)
	defer later.Close()
	for _, want := range []string{
		"job behind has caught up with the shared reader on partition 0 (offset 10)",
		"job ahead reads partition 0 on its own, from after offset 13",
		"job later reads partition 0 on its own, from after offset 1048581",
	} {
		if !strings.Contains(f.logged(), want) {
			t.Errorf("no %q in the log:\n%s", want, f.logged())
		}
	}
	if in := f.reg.Sources()[0]; !slices.Equal(in.Jobs, []string{"a", "at", "behind"}) {
		t.Errorf("jobs %v", in.Jobs)
	}
	f.push(10, 20)
	read(t, a, 10) // the hub is at offset 20
	if got = append(got, read(t, behind, 10)...); !slices.Equal(got, seq(5, 20)) {
		t.Errorf("behind read %v", got)
	}
	if got := read(t, at, 10); !slices.Equal(got, seq(10, 20)) {
		t.Errorf("at read %v", got)
	}
	if got := read(t, ahead, 7); !slices.Equal(got, seq(13, 20)) {
		t.Errorf("ahead read %v", got)
	}
	if in := f.reg.Sources()[0]; !slices.Equal(in.Jobs, []string{"a", "ahead", "at", "behind"}) {
		t.Errorf("jobs %v", in.Jobs)
	}
	if n := f.src.opens.Load(); n != 4 {
		t.Errorf("%d readers opened, want 4 (the hub's, behind's, ahead's, later's)", n)
	}
}

// A hub opened for a resumed job starts after its offset; a job resuming
// further back, before the hub has read a row, reads on its own.
func TestShareResumeFirst(t *testing.T) {
	f := newFixture(t, Options{})
	f.push(0, 20)
	a := f.open(t, "a", true, 10)
	defer a.Close()
	b := f.open(t, "b", true, 5)
	defer b.Close()
	if got := read(t, a, 10); !slices.Equal(got, seq(10, 20)) {
		t.Errorf("a read %v", got)
	}
	if got := read(t, b, 15); !slices.Equal(got, seq(5, 20)) {
		t.Errorf("b read %v", got)
	}
}

// A reader that fails fails every subscriber attached; the next job to
// come opens a reader anew.
func TestShareFailure(t *testing.T) {
	f := newFixture(t, Options{})
	a := f.open(t, "a", false, 0)
	b := f.open(t, "b", false, 0)
	f.push(0, 5)
	read(t, a, 5)
	boom := errors.New("source t: broker gone")
	f.src.fail.Store(&boom)
	for _, r := range []connector.Reader{a, b} {
		var err error
		for err == nil {
			err = r.Read(context.Background(), types.NewBatch(8, 1), 8)
		}
		if err != boom {
			t.Errorf("read: %v", err)
		}
		r.Close()
	}
	if !strings.Contains(f.logged(), "the reader of partition 0 failed: source t: broker gone") {
		t.Errorf("log:\n%s", f.logged())
	}
	f.src.fail.Store(nil)
	c := f.open(t, "c", false, 0)
	defer c.Close()
	f.push(5, 6)
	if got := read(t, c, 6); !slices.Equal(got, seq(0, 6)) {
		t.Errorf("c read %v", got)
	}
	if n := f.src.opens.Load(); n != 2 {
		t.Errorf("%d readers opened, want 2", n)
	}
}

// A job that starts afresh while the hub reads (a source that is no
// generator: it has a history) reads on its own from the table's
// startup position (here, the partition's start) until it has caught up,
// then through the hub: it gets every row, once, in order. So does a job
// reading a changelog (whole), even of a generator.
func TestShareCatchUp(t *testing.T) {
	for _, whole := range []bool{false, true} {
		t.Run(fmt.Sprintf("whole=%v", whole), func(t *testing.T) {
			f := newFixture(t, Options{BatchSize: 3})
			f.whole, f.src.gen = whole, whole
			a := f.open(t, "a", false, 0)
			defer a.Close()
			b := f.open(t, "b", false, 0) // nothing read yet: b attaches
			defer b.Close()
			f.push(0, 10)
			read(t, a, 10)
			read(t, b, 10)
			c := f.open(t, "c", false, 0)
			defer c.Close()
			if !strings.Contains(f.logged(), "job c reads partition 0 on its own, from the table's startup position, until it reaches the shared reader (at offset 10)") {
				t.Errorf("log:\n%s", f.logged())
			}
			got := read(t, c, 10)
			f.push(10, 20)
			read(t, a, 10)
			read(t, b, 10)
			got = append(got, read(t, c, 10)...)
			if !slices.Equal(got, seq(0, 20)) {
				t.Errorf("c read %v", got)
			}
			if in := f.reg.Sources()[0]; !slices.Equal(in.Jobs, []string{"a", "b", "c"}) || in.Opens != 1 {
				t.Errorf("shared source %+v", in)
			}
			if !strings.Contains(f.logged(), "job c has caught up with the shared reader on partition 0 (offset 10): it reads through it now") {
				t.Errorf("log:\n%s", f.logged())
			}
			if n := f.src.opens.Load(); n != 2 {
				t.Errorf("%d readers opened, want 2 (the hub's, c's until it caught up)", n)
			}
		})
	}
}

// The end of an unbounded partition (the memory source's Close of it)
// reaches every subscriber.
func TestShareEnd(t *testing.T) {
	f := newFixture(t, Options{})
	a := f.open(t, "a", false, 0)
	defer a.Close()
	b := f.open(t, "b", false, 0)
	defer b.Close()
	f.push(0, 3)
	f.mem.ClosePartition(0)
	for _, r := range []connector.Reader{a, b} {
		var n int
		for {
			bt := types.NewBatch(8, 1)
			err := r.Read(context.Background(), bt, 8)
			n += len(bt.Rows)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if n != 3 {
			t.Errorf("read %d rows before the end, want 3", n)
		}
	}
}

// What is not shared: a bounded source, a table with 'scan.shared-source'
// = 'false'; and the option's value is checked.
func TestShareScope(t *testing.T) {
	reg := NewRegistry(Options{})
	bounded := memory.NewBounded(nil)
	if s, err := reg.Wrap("j", table, bounded, false); err != nil || s != connector.Source(bounded) {
		t.Errorf("bounded source wrapped: %T, %v", s, err)
	}
	off := table
	off.Options = connector.Options{"connector": "memory-test", connector.SharedSourceOption: "false"}
	unbounded := memory.NewUnbounded(1)
	if s, err := reg.Wrap("j", off, unbounded, false); err != nil || s != connector.Source(unbounded) {
		t.Errorf("source with the option off wrapped: %T, %v", s, err)
	}
	off.Options[connector.SharedSourceOption] = "sometimes"
	if _, err := reg.Wrap("j", off, unbounded, false); err == nil || !strings.Contains(err.Error(), "option 'scan.shared-source': expected true or false") {
		t.Errorf("error %v", err)
	}
	// The option changes neither the key nor the identity.
	on := table
	on.Options = connector.Options{"connector": "memory-test", connector.SharedSourceOption: "true"}
	if Key(on, unbounded) != Key(table, unbounded) || connector.SourceIdentity(on, unbounded) != connector.SourceIdentity(table, unbounded) {
		t.Errorf("the option changes the key or the identity")
	}
	// Columns decoded are part of a decoded source's key.
	narrow := table
	narrow.Read = []bool{false}
	if Key(narrow, unbounded) == Key(table, unbounded) {
		t.Errorf("the columns read do not change the key")
	}
}

// readView reads n rows from r with ReadView and returns their values,
// checking their origins (as read does), and the address of the first
// value of each row.
func readView(t *testing.T, r connector.Reader, n int) (vals []int64, addrs []*types.Value) {
	t.Helper()
	vr, ok := r.(connector.ViewReader)
	if !ok {
		t.Fatalf("%T is not a connector.ViewReader", r)
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(vals) < n {
		if time.Now().After(deadline) {
			t.Fatalf("read %d rows of %d", len(vals), n)
		}
		rows, err := vr.ReadView(context.Background(), n-len(vals))
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		// The rows are valid until the next read only.
		for _, row := range rows {
			v := row.Vals[0].Int()
			if row.Origin.Offset != v+1 || row.Origin.Part != 0 {
				t.Fatalf("row %d has origin %+v", v, row.Origin)
			}
			vals = append(vals, v)
			addrs = append(addrs, &row.Vals[0])
		}
	}
	return vals, addrs
}

// ReadView lends every job the rows of the hub's batch, without a copy:
// both jobs' rows hold the very same values. A job resumed after an
// offset inside a batch gets the rows after it only.
func TestShareReadView(t *testing.T) {
	f := newFixture(t, Options{})
	f.src.gen = true // a generator's job joins the hub where it is
	a := f.open(t, "a", false, 0)
	defer a.Close()
	b := f.open(t, "b", false, 0)
	defer b.Close()
	f.push(0, 10)
	va, pa := readView(t, a, 10)
	vb, pb := readView(t, b, 10)
	if !slices.Equal(va, seq(0, 10)) || !slices.Equal(vb, seq(0, 10)) {
		t.Fatalf("a read %v, b %v", va, vb)
	}
	for i := range pa {
		if pa[i] != pb[i] {
			t.Fatalf("row %d: a and b got copies, not the hub's row", i)
		}
	}
	f.push(10, 20)
	c := f.open(t, "c", true, 15) // values up to 14 seen
	defer c.Close()
	readView(t, a, 10)
	readView(t, b, 10)
	if vc, _ := readView(t, c, 5); !slices.Equal(vc, seq(15, 20)) {
		t.Fatalf("c, resumed after offset 15, read %v", vc)
	}
}
