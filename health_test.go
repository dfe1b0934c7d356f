package sluice_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/internal/kafkatest"
)

// gate is a writer that blocks every write while it is shut: a print
// sink writing into it holds its job back, as a slow system would.
type gate struct {
	mu      sync.Mutex
	open    chan struct{}
	waiting int // writes blocked now
	buf     strings.Builder
}

func newGate() *gate { return &gate{open: make(chan struct{})} }

func (g *gate) Write(p []byte) (int, error) {
	g.mu.Lock()
	g.waiting++
	open := g.open
	g.mu.Unlock()
	<-open
	g.mu.Lock()
	defer g.mu.Unlock()
	g.waiting--
	return g.buf.Write(p)
}

func (g *gate) blocked() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.waiting > 0
}

func (g *gate) release() { close(g.open) }

func (g *gate) String() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.buf.String()
}

// healthClicks returns n records of clicks, 100 ms of event time apart
// over 37 users, spread over 2 partitions.
func healthClicks(n int) []*kgo.Record {
	base := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	var recs []*kgo.Record
	for i := range n {
		ts := base.Add(time.Duration(i) * 100 * time.Millisecond)
		recs = append(recs, &kgo.Record{Partition: int32(i % 2),
			Value: fmt.Appendf(nil, `{"u":"u%d","ts":"%s"}`, i%37, ts.Format("2006-01-02 15:04:05.000"))})
	}
	return recs
}

const healthJob = `
SET 'parallelism.default' = '2';
CREATE TABLE clicks (
  u STRING,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts
) WITH (
  'connector' = 'kafka',
  'topic' = 'clicks',
  'properties.bootstrap.servers' = '$BOOTSTRAP',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'json'
);
CREATE TABLE out (u STRING, ws TIMESTAMP(3), c BIGINT) WITH ('connector' = 'print');
INSERT INTO out
SELECT u, window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' SECOND))
GROUP BY u, window_start, window_end;
`

// operator returns the operator of h of the given kind; it fails the
// test unless there is exactly one.
func operator(t *testing.T, h exec.Health, kind string) exec.OperatorHealth {
	t.Helper()
	var found []exec.OperatorHealth
	for _, o := range h.Operators {
		if o.Kind == kind {
			found = append(found, o)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d operators of kind %s in %+v", len(found), kind, h.Operators)
	}
	return found[0]
}

// TestHealthKafkaWindow runs a windowed aggregate over Kafka whose sink
// is held back: while it is, the source lags behind the topic and the
// aggregate's task is back-pressured; once the sink is let go, the job
// catches up, its consumer lag is 0 and the operators' rows add up to
// the job's.
func TestHealthKafkaWindow(t *testing.T) {
	const n = 40_000
	bs := kafkatest.Start(t, 2, "clicks")
	kafkatest.ProduceTo(t, bs, "clicks", healthClicks(n)...)
	g := newGate()
	e, err := sluice.Open(sluice.Options{Stdout: g})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	src := strings.ReplaceAll(healthJob, "$BOOTSTRAP", bs)
	res, err := e.Exec(context.Background(), "job.sql", []byte(src))
	if err != nil {
		t.Fatal(sluice.FormatError(err, []byte(src)))
	}
	j := res[len(res)-1].Job
	released := false
	defer func() {
		if !released {
			g.release()
		}
		j.Cancel()
		j.Wait()
	}()

	// Held back: the sink blocks, the aggregate's sends into the sink's
	// inbox block, and the source stops short of the topic's end.
	until(t, func() bool {
		h := j.Health()
		return g.blocked() && operator(t, h, "WindowAggregate").BackPressure > 0
	}, func() string { return fmt.Sprintf("no back pressure: %+v", j.Health()) })
	h := j.Health()
	for _, o := range h.Operators {
		t.Logf("held back: %+v", o)
	}
	scan := operator(t, h, "TableSourceScan")
	if !scan.HasConsumerLag || scan.ConsumerLag <= 0 || scan.RowsOut+scan.ConsumerLag != n {
		t.Fatalf("held back after %d rows: consumer lag %d (known: %v), want the %d rows not read", scan.RowsOut, scan.ConsumerLag, scan.HasConsumerLag, n-scan.RowsOut)
	}
	if !h.HasConsumerLag || h.ConsumerLag != scan.ConsumerLag {
		t.Fatalf("job's consumer lag %d (known: %v), want the source's %d", h.ConsumerLag, h.HasConsumerLag, scan.ConsumerLag)
	}
	if h.MaxBackPressure <= 0 {
		t.Fatalf("job's back pressure %v, want the aggregate's", h.MaxBackPressure)
	}

	g.release()
	released = true
	until(t, func() bool {
		h := j.Health()
		return h.RowsIn == n && h.HasConsumerLag && h.ConsumerLag == 0
	}, func() string { return fmt.Sprintf("not caught up: %+v", j.Health()) })
	// Every window but the last (10 rows, one per user) fires, and its
	// rows reach the sink.
	until(t, func() bool { return j.Health().RowsOut == n-10 },
		func() string { return fmt.Sprintf("the sink did not write every window: %+v", j.Health()) })

	h = j.Health()
	for _, o := range h.Operators {
		t.Logf("caught up: %+v", o)
	}
	scan = operator(t, h, "TableSourceScan")
	agg := operator(t, h, "WindowAggregate")
	sink := operator(t, h, "Sink")
	if scan.Table != "clicks" || sink.Table != "out" {
		t.Errorf("tables: source %q, sink %q", scan.Table, sink.Table)
	}
	if scan.Tasks != 2 || agg.Tasks != 2 || sink.Tasks != 1 {
		t.Errorf("tasks: source %d, aggregate %d, sink %d; want 2, 2, 1", scan.Tasks, agg.Tasks, sink.Tasks)
	}
	if scan.RowsIn != n || scan.RowsOut != n {
		t.Errorf("source: %d rows in, %d out; want %d", scan.RowsIn, scan.RowsOut, n)
	}
	// Every operator takes what the one before it put out.
	for i := 1; i < len(h.Operators); i++ {
		if prev, o := h.Operators[i-1], h.Operators[i]; o.RowsIn != prev.RowsOut {
			t.Errorf("%s takes %d rows, %s put out %d", o.Name, o.RowsIn, prev.Name, prev.RowsOut)
		}
	}
	if agg.RowsIn != n || agg.RowsOut != n-10 || sink.RowsOut != h.RowsOut {
		t.Errorf("aggregate: %d in, %d out; sink %d in, %d out; job %d out", agg.RowsIn, agg.RowsOut, sink.RowsIn, sink.RowsOut, h.RowsOut)
	}
	if got := strings.Count(g.String(), "\n"); int64(got) != h.RowsOut {
		t.Errorf("%d rows printed, the job counts %d", got, h.RowsOut)
	}
	// Event time is 2024's: the watermark lags the wall clock by
	// months, and the aggregate's is the source's (the lowest of its
	// inputs', which are all at the end).
	last := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC).Add((n - 2) * 100 * time.Millisecond)
	if !scan.HasWatermark || scan.Watermark != last.UnixMicro() {
		t.Errorf("source watermark %v (%v), want %v", time.UnixMicro(scan.Watermark).UTC(), scan.HasWatermark, last)
	}
	if !agg.HasWatermark || agg.WatermarkLag < 24*time.Hour || agg.WatermarkLag != time.Duration(h.At.UnixMicro()-agg.Watermark)*time.Microsecond {
		t.Errorf("aggregate watermark %d, lag %v", agg.Watermark, agg.WatermarkLag)
	}
	if !h.HasWatermarkLag || h.MaxWatermarkLag < agg.WatermarkLag {
		t.Errorf("job's watermark lag %v, below the aggregate's %v", h.MaxWatermarkLag, agg.WatermarkLag)
	}
}

// The rules of a statement set over one source: each rule's Calc and
// sink count the rows its WHERE keeps, also when the source's task hands
// them past the Calc (a rule that only picks columns).
func TestHealthRules(t *testing.T) {
	e, err := sluice.Open(sluice.Options{Stdout: &syncBuffer{}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	src := `
CREATE TABLE ids (id BIGINT, s STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '1000',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '1000');
CREATE TABLE even (id BIGINT) WITH ('connector' = 'blackhole');
CREATE TABLE high (id BIGINT, s STRING) WITH ('connector' = 'blackhole');
CREATE TABLE twice (id BIGINT) WITH ('connector' = 'blackhole');
EXECUTE STATEMENT SET BEGIN
INSERT INTO even SELECT id FROM ids WHERE MOD(id, 2) = 0;
INSERT INTO high SELECT id, s FROM ids WHERE id > 900;
INSERT INTO twice SELECT id * 2 FROM ids WHERE id <= 10;
END;`
	res, err := e.Exec(context.Background(), "rules.sql", []byte(src))
	if err != nil {
		t.Fatal(sluice.FormatError(err, []byte(src)))
	}
	j := res[len(res)-1].Job
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	h := j.Health()
	want := map[string]int64{"even": 500, "high": 100, "twice": 10}
	sinks := 0
	for i, o := range h.Operators {
		if o.Kind == "TableSourceScan" && (o.RowsIn != 1000 || o.RowsOut != 1000) {
			t.Errorf("source: %+v", o)
		}
		if o.Kind != "Sink" {
			continue
		}
		sinks++
		calc := h.Operators[i-1]
		if n := want[o.Table]; calc.Kind != "Calc" || calc.RowsIn != n || calc.RowsOut != n || o.RowsIn != n || o.RowsOut != n {
			t.Errorf("rule into %s: %+v, then %+v; want %d rows each", o.Table, calc, o, n)
		}
	}
	if sinks != 3 || h.RowsOut != 610 {
		t.Fatalf("%d sinks, %d rows written: %+v", sinks, h.RowsOut, h.Operators)
	}
}
