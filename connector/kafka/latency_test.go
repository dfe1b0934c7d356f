package kafka_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/internal/kafkatest"
)

// The latency benchmarks run an unbounded job in the engine against the
// in-process broker while a producer writes records at a fixed rate, each
// carrying its send time, and a read-committed consumer of the output topic
// takes every result's arrival time. Producer, broker, engine and consumer
// share the process and its cores, so the figures include the broker's
// work and the producer's and the sink's client batching (franz-go's
// default 10 ms linger in the sink; none in the benchmark's producer).
//
// A run lasts a few seconds whatever b.N is, so the figures are per run,
// not per op; run them with -benchtime 1x. Allocations are not reported:
// they would count the producer's and the consumer's too.

// latencyPartitions is the number of partitions of the input and output
// topics.
const latencyPartitions = 4

// latencyMode is how a job makes its output visible.
type latencyMode struct {
	name string
	// settings are SET statements run before the tables are declared.
	settings string
	// sink are the sink table's delivery options.
	sink string
}

const exactlyOnceSink = `'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = 'latency'`

const kafkaState = `SET 'state.backend' = 'kafka';
SET 'state.kafka.bootstrap.servers' = '$BOOTSTRAP';
`

var latencyModes = []latencyMode{
	{name: "at-least-once", sink: `'sink.delivery-guarantee' = 'at-least-once'`},
	// Without the producer's default 10 ms linger.
	{name: "at-least-once-linger-0", sink: `'sink.delivery-guarantee' = 'at-least-once', 'properties.linger.ms' = '0'`},
	// The sink commits its own transaction once it has been open for
	// 'sink.transaction.interval' (checked every quarter interval).
	{name: "exactly-once-txn-1s", sink: exactlyOnceSink},
	{name: "exactly-once-txn-100ms", sink: exactlyOnceSink + `, 'sink.transaction.interval' = '100ms'`},
	// The output commits with the checkpoint, in the state backend's
	// transaction.
	{name: "kafka-state-ckpt-1s", settings: kafkaState + "SET 'execution.checkpointing.interval' = '1s';\n", sink: exactlyOnceSink},
	{name: "kafka-state-ckpt-100ms", settings: kafkaState + "SET 'execution.checkpointing.interval' = '100ms';\n", sink: exactlyOnceSink},
}

var latencyRates = []int{20_000, 100_000}

// BenchmarkKafkaFilterLatency measures the end-to-end latency of an
// unbounded Kafka → filter → Kafka job (JSON, 4 partitions; half of the
// rows pass) for each input rate and delivery mode: from a record's send
// time to the moment a read-committed consumer of the output receives the
// row. After a warm-up of one second from the first output row, the rows
// sent during the next three seconds are measured; every row that passed
// the filter must arrive exactly once. rows/s is the input rate achieved.
func BenchmarkKafkaFilterLatency(b *testing.B) {
	for _, rate := range latencyRates {
		for _, m := range latencyModes {
			b.Run(fmt.Sprintf("rate=%dk/%s", rate/1000, m.name), func(b *testing.B) {
				benchFilterLatency(b, rate, m)
			})
		}
	}
}

func benchFilterLatency(b *testing.B, rate int, m latencyMode) {
	const (
		warmup  = time.Second
		measure = 3 * time.Second
	)
	bs := kafkatest.Start(b, latencyPartitions, "in", "out")
	job := startLatencyJob(b, bs, m.settings+`
CREATE TABLE events (id BIGINT, sent BIGINT, price INT, item STRING) WITH (
  'connector' = 'kafka', 'topic' = 'in', 'properties.bootstrap.servers' = '$BOOTSTRAP',
  'scan.startup.mode' = 'earliest-offset', 'format' = 'json');
CREATE TABLE passed (id BIGINT, sent BIGINT, item STRING) WITH (
  'connector' = 'kafka', 'topic' = 'out', 'properties.bootstrap.servers' = '$BOOTSTRAP',
  'format' = 'json', `+m.sink+`);
INSERT INTO passed SELECT id, sent, item FROM events WHERE price >= 50;
`)
	c := startLatencyConsumer(b, bs, "out", func(v []byte, arrived int64) (latencySample, error) {
		sent, ok := jsonInt(v, "sent")
		if !ok {
			return latencySample{}, fmt.Errorf("no sent time in %s", v)
		}
		return latencySample{at: sent, arrived: arrived}, nil
	})
	p := startPacedProducer(b, bs, "in", rate, func(dst []byte, i int, sent int64) []byte {
		return fmt.Appendf(dst, `{"id":%d,"sent":%d,"price":%d,"item":"item-%d"}`, i, sent, i%100, i%1000)
	})
	first := c.waitFirst(b, job)
	from := first.Add(warmup)
	to := from.Add(measure)
	time.Sleep(time.Until(to))
	sent := p.stop(b)

	want := 0 // rows that pass the filter
	sentInWindow := 0
	for i, at := range sent {
		if i%100 >= 50 {
			want++
		}
		if at >= from.UnixNano() && at < to.UnixNano() {
			sentInWindow++
		}
	}
	samples := c.waitFor(b, job, want, 30*time.Second)
	job.stop(b)

	var lat []int64
	for _, s := range samples {
		if s.at >= from.UnixNano() && s.at < to.UnixNano() {
			lat = append(lat, s.arrived-s.at)
		}
	}
	reportLatency(b, lat)
	b.ReportMetric(float64(sentInWindow)/measure.Seconds(), "rows/s")
}

// BenchmarkKafkaWindowLatency measures the latency of an unbounded Kafka →
// TUMBLE(1 s) COUNT/SUM per key → Kafka job (JSON, 4 partitions, 100
// keys) for each input rate and delivery mode: from a window's end to the
// moment a read-committed consumer of the output receives its result. The
// event time is the producer's send time (in milliseconds), and the
// watermark trails it by 1 ms, Flink's strategy for ascending timestamps
// (each partition is in send order, and many rows share a millisecond),
// so a window fires as soon as every partition has a row 1 ms past its
// end; a longer watermark delay adds itself to these figures. Four windows
// are measured, starting one second after the first result; every one of
// their results must arrive once, with the counts the producer sent.
// rows/s is the input rate achieved.
func BenchmarkKafkaWindowLatency(b *testing.B) {
	for _, rate := range latencyRates {
		for _, m := range latencyModes {
			b.Run(fmt.Sprintf("rate=%dk/%s", rate/1000, m.name), func(b *testing.B) {
				benchWindowLatency(b, rate, m)
			})
		}
	}
}

func benchWindowLatency(b *testing.B, rate int, m latencyMode) {
	const (
		keys    = 100
		windows = 4
		second  = int64(time.Second)
	)
	bs := kafkatest.Start(b, latencyPartitions, "in", "out")
	job := startLatencyJob(b, bs, m.settings+`
CREATE TABLE events (
  sent BIGINT, ts TIMESTAMP(3), item STRING, price BIGINT,
  WATERMARK FOR ts AS ts - INTERVAL '0.001' SECOND
) WITH (
  'connector' = 'kafka', 'topic' = 'in', 'properties.bootstrap.servers' = '$BOOTSTRAP',
  'scan.startup.mode' = 'earliest-offset', 'format' = 'json');
CREATE TABLE totals (window_start TIMESTAMP(3), window_end TIMESTAMP(3), item STRING, n BIGINT, total BIGINT) WITH (
  'connector' = 'kafka', 'topic' = 'out', 'properties.bootstrap.servers' = '$BOOTSTRAP',
  'format' = 'json', `+m.sink+`);
INSERT INTO totals
SELECT window_start, window_end, item, COUNT(*), SUM(price)
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' SECOND))
GROUP BY window_start, window_end, item;
`)
	c := startLatencyConsumer(b, bs, "out", func(v []byte, arrived int64) (latencySample, error) {
		end, ok := jsonString(v, "window_end")
		n, ok2 := jsonInt(v, "n")
		if !ok || !ok2 {
			return latencySample{}, fmt.Errorf("no window_end or n in %s", v)
		}
		t, err := time.Parse(time.DateTime, string(end))
		if err != nil {
			return latencySample{}, fmt.Errorf("cannot parse window_end of %s: %w", v, err)
		}
		return latencySample{at: t.UnixNano(), arrived: arrived, n: n}, nil
	})
	p := startPacedProducer(b, bs, "in", rate, func(dst []byte, i int, sent int64) []byte {
		ts := time.Unix(0, sent).UTC()
		dst = fmt.Appendf(dst, `{"sent":%d,"ts":"`, sent)
		dst = ts.AppendFormat(dst, "2006-01-02 15:04:05.000")
		return fmt.Appendf(dst, `","item":"k-%d","price":%d}`, i%keys, i%100)
	})
	// The measured windows end at from+1 s, ..., to.
	first := c.waitFirst(b, job)
	from := (first.UnixNano()/second + 1) * second
	to := from + windows*second
	// Keep producing a little past the last measured window, so that the
	// watermark passes its end.
	time.Sleep(time.Until(time.Unix(0, to+200*int64(time.Millisecond))))
	sent := p.stop(b)

	want := map[int64]int64{} // window end → rows sent into the window
	for _, at := range sent {
		if end := (at/int64(time.Millisecond)/1000 + 1) * second; end > from && end <= to {
			want[end]++
		}
	}
	if len(want) != windows {
		b.Fatalf("rows sent into %d of the %d measured windows", len(want), windows)
	}
	var lat []int64
	got := map[int64]int64{}
	results := 0
	deadline := time.Now().Add(30 * time.Second)
	for {
		lat, got, results = lat[:0], map[int64]int64{}, 0
		for _, s := range c.samples() {
			if s.at > from && s.at <= to {
				lat = append(lat, s.arrived-s.at)
				got[s.at] += s.n
				results++
			}
		}
		if results >= windows*keys || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	job.stop(b)
	if results != windows*keys {
		b.Fatalf("%d results of the measured windows arrived, want %d (%d late rows)", results, windows*keys, job.j.Metrics.LateRows.Load())
	}
	for end, n := range want {
		if got[end] != n {
			b.Fatalf("window ending %s counted %d rows, %d sent (%d late rows)", time.Unix(0, end).UTC().Format(time.DateTime), got[end], n, job.j.Metrics.LateRows.Load())
		}
	}
	reportLatency(b, lat)
	var sentRows int64
	for _, n := range want {
		sentRows += n
	}
	b.ReportMetric(float64(sentRows)/float64(windows), "rows/s")
}

// latencyJob is a job running in its own engine.
type latencyJob struct {
	e *sluice.Engine
	j *sluice.Job
}

// startLatencyJob starts the job of src, with $BOOTSTRAP replaced, in a
// fresh engine.
func startLatencyJob(b *testing.B, bootstrap, src string) *latencyJob {
	b.Helper()
	e, err := sluice.Open(sluice.Options{})
	if err != nil {
		b.Fatal(err)
	}
	text := []byte(strings.ReplaceAll(src, "$BOOTSTRAP", bootstrap))
	res, err := e.Exec(context.Background(), "latency.sql", text)
	if err != nil {
		e.Close()
		b.Fatal(sluice.FormatError(err, text))
	}
	j := &latencyJob{e: e, j: res[len(res)-1].Job}
	b.Cleanup(func() { e.Close() })
	return j
}

// failed fails the benchmark if the job has ended.
func (j *latencyJob) failed(b *testing.B) {
	b.Helper()
	select {
	case <-j.j.Done():
		b.Fatalf("the job ended: %v", j.j.Wait())
	default:
	}
}

// stop stops the job and fails the benchmark if it had failed.
func (j *latencyJob) stop(b *testing.B) {
	b.Helper()
	j.failed(b)
	j.j.Cancel()
	if err := j.j.Wait(); err != nil {
		b.Fatalf("job: %v", err)
	}
}

// latencySample is one output record: the time it measures from (a send
// time or a window's end, Unix nanoseconds), when it arrived, and for a
// window result its count.
type latencySample struct {
	at, arrived int64
	n           int64
}

// latencyConsumer reads a topic read-committed from its start and keeps a
// sample of every record.
type latencyConsumer struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu   sync.Mutex
	all  []latencySample
	err  error
	seen chan struct{} // closed at the first record
}

func startLatencyConsumer(b *testing.B, bootstrap, topic string, parse func(v []byte, arrived int64) (latencySample, error)) *latencyConsumer {
	b.Helper()
	cl := kafkatest.Client(b, bootstrap,
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	ctx, cancel := context.WithCancel(context.Background())
	c := &latencyConsumer{cancel: cancel, done: make(chan struct{}), seen: make(chan struct{})}
	go func() {
		defer close(c.done)
		for {
			fs := cl.PollFetches(ctx)
			arrived := time.Now().UnixNano()
			if ctx.Err() != nil {
				return
			}
			var err error
			fs.EachError(func(_ string, p int32, e error) {
				err = cmpErr(err, fmt.Errorf("cannot read %s partition %d: %w", topic, p, e))
			})
			c.mu.Lock()
			fs.EachRecord(func(r *kgo.Record) {
				s, perr := parse(r.Value, arrived)
				if perr != nil {
					err = cmpErr(err, perr)
					return
				}
				if len(c.all) == 0 {
					close(c.seen)
				}
				c.all = append(c.all, s)
			})
			if err != nil {
				c.err = cmpErr(c.err, err)
			}
			c.mu.Unlock()
		}
	}()
	b.Cleanup(func() {
		cancel()
		<-c.done
	})
	return c
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// waitFirst waits for the first record and returns when it arrived.
func (c *latencyConsumer) waitFirst(b *testing.B, j *latencyJob) time.Time {
	b.Helper()
	select {
	case <-c.seen:
		return time.Now()
	case <-j.j.Done():
		b.Fatalf("the job ended before any output: %v", j.j.Wait())
	case <-time.After(30 * time.Second):
		j.failed(b)
		b.Fatal("no output after 30 s")
	}
	return time.Time{}
}

// samples returns a copy of the samples so far.
func (c *latencyConsumer) samples() []latencySample {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.all)
}

// waitFor waits until n records have arrived and returns their samples;
// it fails the benchmark on a read error, on more than n records and
// after timeout.
func (c *latencyConsumer) waitFor(b *testing.B, j *latencyJob, n int, timeout time.Duration) []latencySample {
	b.Helper()
	deadline := time.Now().Add(timeout)
	for {
		c.mu.Lock()
		got, err := len(c.all), c.err
		c.mu.Unlock()
		if err != nil {
			b.Fatal(err)
		}
		if got >= n || time.Now().After(deadline) {
			break
		}
		j.failed(b)
		time.Sleep(20 * time.Millisecond)
	}
	// Give duplicates, if any, a moment to show.
	time.Sleep(100 * time.Millisecond)
	all := c.samples()
	if len(all) != n {
		b.Fatalf("%d records arrived, want %d", len(all), n)
	}
	return all
}

// pacedProducer writes records round-robin over the partitions of a topic
// at a fixed rate, each made by value from its sequence number and its
// send time.
type pacedProducer struct {
	stopc chan struct{}
	done  chan struct{}
	sent  []int64 // send time of every record, by sequence number
	err   atomic.Pointer[error]
}

func startPacedProducer(b *testing.B, bootstrap, topic string, rate int, value func(dst []byte, i int, sent int64) []byte) *pacedProducer {
	b.Helper()
	cl := kafkatest.Client(b, bootstrap,
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(0),
		kgo.MaxBufferedRecords(1<<20))
	p := &pacedProducer{stopc: make(chan struct{}), done: make(chan struct{})}
	failed := func(_ *kgo.Record, err error) {
		if err != nil {
			p.err.CompareAndSwap(nil, &err)
		}
	}
	go func() {
		defer close(p.done)
		ctx := context.Background()
		start := time.Now()
		for {
			select {
			case <-p.stopc:
				return
			default:
			}
			due := int(float64(rate) * time.Since(start).Seconds())
			for i := len(p.sent); i < due; i++ {
				now := time.Now().UnixNano()
				p.sent = append(p.sent, now)
				cl.Produce(ctx, &kgo.Record{
					Topic:     topic,
					Partition: int32(i % latencyPartitions),
					Value:     value(nil, i, now),
				}, failed)
			}
			time.Sleep(time.Millisecond)
		}
	}()
	b.Cleanup(func() { p.halt() })
	return p
}

func (p *pacedProducer) halt() {
	select {
	case <-p.stopc:
	default:
		close(p.stopc)
	}
	<-p.done
}

// stop stops producing and returns the send times of the records sent.
func (p *pacedProducer) stop(b *testing.B) []int64 {
	b.Helper()
	p.halt()
	if err := p.err.Load(); err != nil {
		b.Fatalf("cannot produce: %v", *err)
	}
	return p.sent
}

// reportLatency reports the median, 99th percentile and maximum of lat
// (nanoseconds) in milliseconds.
func reportLatency(b *testing.B, lat []int64) {
	b.Helper()
	if len(lat) == 0 {
		b.Fatal("nothing measured")
	}
	slices.Sort(lat)
	at := func(q float64) float64 {
		i := min(int(q*float64(len(lat))), len(lat)-1)
		return float64(lat[i]) / 1e6
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1])/1e6, "max-ms")
}

// jsonInt returns the integer of a top-level "key": field of a flat JSON
// object as the json format writes it.
func jsonInt(v []byte, key string) (int64, bool) {
	s, ok := jsonField(v, key)
	if !ok {
		return 0, false
	}
	end := 0
	for end < len(s) && (s[end] == '-' || s[end] >= '0' && s[end] <= '9') {
		end++
	}
	n, err := strconv.ParseInt(string(s[:end]), 10, 64)
	return n, err == nil
}

// jsonString returns the string of a "key": field (without escapes).
func jsonString(v []byte, key string) ([]byte, bool) {
	s, ok := jsonField(v, key)
	if !ok || len(s) == 0 || s[0] != '"' {
		return nil, false
	}
	end := bytes.IndexByte(s[1:], '"')
	if end < 0 {
		return nil, false
	}
	return s[1 : 1+end], true
}

func jsonField(v []byte, key string) ([]byte, bool) {
	i := bytes.Index(v, []byte(`"`+key+`":`))
	if i < 0 {
		return nil, false
	}
	return v[i+len(key)+3:], true
}
