package kshuffle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/types"
)

// bidSchema is Nexmark's Bid table without its free-text column: auction,
// bidder, price, channel, url, date_time. Rows are keyed by auction.
var bidSchema = []types.Type{
	types.BigInt, types.BigInt, types.Decimal(10, 2), types.String, types.String, types.Timestamp(3),
}

var bidChannels = []string{"Google", "Facebook", "Baidu", "Apple"}

// bidGen generates bids over 10,000 auctions, with consecutive origins in
// partition 0. Values are random, so that no two batches repeat (a
// compressor would find the repeats across records); strings come from
// pools, as a table's strings do.
type bidGen struct {
	rng  *rand.Rand
	ts   int64
	off  int64
	urls []string
}

func newBidGen() *bidGen {
	g := &bidGen{rng: rand.New(rand.NewPCG(7, 11)), ts: 1_700_000_000_000_000}
	for _, ch := range bidChannels {
		for i := 0; i < 1000; i++ {
			g.urls = append(g.urls, fmt.Sprintf("https://www.nexmark.com/%s/item.htm?query=1&channel_id=%d", ch, i))
		}
	}
	return g
}

// fill replaces b's rows with n new bids.
func (g *bidGen) fill(b *types.Batch, n int) {
	b.Reset()
	for j := 0; j < n; j++ {
		g.off++
		g.ts += g.rng.Int64N(2000) * 1000
		v := b.AddRow(types.Insert, types.Origin{Part: 0, Offset: g.off}, len(bidSchema))
		v[0] = types.BigIntValue(1000 + g.rng.Int64N(10_000))
		v[1] = types.BigIntValue(g.rng.Int64N(100_000))
		v[2] = types.DecimalValue(100+g.rng.Int64N(1_000_000), 2)
		ch := g.rng.IntN(len(bidChannels))
		v[3] = types.StringValue(bidChannels[ch])
		v[4] = types.StringValue(g.urls[ch*1000+g.rng.IntN(1000)])
		v[5] = types.TimestampValue(g.ts)
	}
}

// batchBytes counts the record batches a client wrote: their compressed
// record bytes plus the fixed record batch header.
type batchBytes struct{ n atomic.Int64 }

const recordBatchHeader = 61

func (h *batchBytes) OnProduceBatchWritten(_ kgo.BrokerMetadata, _ string, _ int32, m kgo.ProduceBatchMetrics) {
	h.n.Add(int64(m.CompressedBytes + recordBatchHeader))
}

// BenchmarkShuffle writes bids through a four-partition shuffle topic on
// an in-process cluster and reads them back. It reports the bytes per row
// the broker stores (bytes/row, from the log directories; data and control
// records and all batch overhead), the bytes the producer wrote
// (wire-bytes/row), and rows per second of the write (acknowledged) and
// read halves.
func BenchmarkShuffle(b *testing.B) {
	const parts = 4
	for _, bc := range []struct {
		name string
		opts Options
	}{
		{"per-row/none", Options{BatchBytes: 1, Compression: NoCompression}},
		{"per-row/batch-zstd", Options{BatchBytes: 1, Compression: Zstd, CompressBatches: true}},
		{"merged/none", Options{Compression: NoCompression}},
		{"merged/zstd", Options{Compression: Zstd}},
		{"merged/lz4", Options{Compression: LZ4}},
		{"merged/snappy", Options{Compression: Snappy}},
		{"merged/batch-zstd", Options{Compression: Zstd, CompressBatches: true}},
		{"merged/batch-lz4", Options{Compression: LZ4, CompressBatches: true}},
		{"merged/batch-snappy", Options{Compression: Snappy, CompressBatches: true}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c, err := kfake.NewCluster(kfake.NumBrokers(1))
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			brokers := c.ListenAddrs()
			ctx := context.Background()
			hook := &batchBytes{}
			o := bc.opts
			o.Topic, o.Partitions, o.Schema, o.Keys = "bids", parts, bidSchema, []int{0}
			o.WriterID, o.Writers, o.Brokers = 0, 1, brokers
			o.ClientOpts = []kgo.Opt{kgo.WithHooks(hook)}
			w, err := NewWriter(o)
			if err != nil {
				b.Fatal(err)
			}
			if err := w.Open(&exec.Context{Ctx: ctx}); err != nil {
				b.Fatal(err)
			}
			defer w.Close()

			gen := newBidGen()
			batch := types.NewBatch(1024, len(bidSchema))
			var genTime time.Duration
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				gen.fill(batch, 1024)
				genTime += time.Since(t0)
				if err := w.Process(batch); err != nil {
					b.Fatal(err)
				}
				if err := w.Watermark(int64(i)); err != nil {
					b.Fatal(err)
				}
			}
			if err := w.Finish(); err != nil {
				b.Fatal(err)
			}
			writeTime := time.Since(start) - genTime
			rows := int64(b.N) * 1024

			start = time.Now()
			read := readAll(b, ctx, brokers, o.Topic, parts)
			readTime := time.Since(start)
			b.StopTimer()
			if read != rows {
				b.Fatalf("read %d rows, wrote %d", read, rows)
			}
			stored := storedBytes(b, ctx, brokers, o.Topic)
			b.ReportMetric(float64(stored)/float64(rows), "bytes/row")
			b.ReportMetric(float64(hook.n.Load())/float64(rows), "wire-bytes/row")
			b.ReportMetric(float64(rows)/writeTime.Seconds(), "write-rows/s")
			b.ReportMetric(float64(rows)/readTime.Seconds(), "read-rows/s")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows), "ns/row")
		})
	}
}

// readAll reads every partition of topic to its end, concurrently, and
// returns the number of rows.
func readAll(b *testing.B, ctx context.Context, brokers []string, topic string, parts int) int64 {
	src, err := NewSource(SourceOptions{Topic: topic, Partitions: parts, Schema: bidSchema, Writers: 1,
		Bounded: true, Brokers: brokers})
	if err != nil {
		b.Fatal(err)
	}
	var total atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, parts)
	for p := 0; p < parts; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := src.OpenReader(ctx, p)
			if err != nil {
				errs <- err
				return
			}
			defer r.Close()
			batch := types.NewBatch(1024, len(bidSchema))
			for {
				batch.Reset()
				err := r.Read(ctx, batch, 1024)
				total.Add(int64(batch.Len()))
				if errors.Is(err, io.EOF) {
					return
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	return total.Load()
}

// storedBytes sums the sizes of topic's partitions in the broker's logs.
func storedBytes(b testing.TB, ctx context.Context, brokers []string, topic string) int64 {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	dirs, err := kadm.NewClient(cl).DescribeAllLogDirs(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	var n int64
	dirs.Each(func(d kadm.DescribedLogDir) {
		d.Topics.Each(func(p kadm.DescribedLogDirPartition) {
			if p.Topic == topic {
				n += p.Size
			}
		})
	})
	return n
}
