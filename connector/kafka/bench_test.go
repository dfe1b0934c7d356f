package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/builtin"
	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/internal/kafkatest"
	"github.com/sluicesql/sluice/types"
)

// produceBids writes n JSON bids over the topic's partitions.
func produceBids(b *testing.B, bs, topic string, partitions, n int) {
	b.Helper()
	base := time.Date(2020, 4, 15, 8, 0, 0, 0, time.UTC)
	const chunk = 50_000
	for from := 0; from < n; from += chunk {
		recs := make([]*kgo.Record, 0, chunk)
		for i := from; i < n && i < from+chunk; i++ {
			ts := base.Add(time.Duration(i) * time.Millisecond).Format("2006-01-02 15:04:05.000")
			recs = append(recs, &kgo.Record{
				Partition: int32(i % partitions),
				Value:     fmt.Appendf(nil, `{"bidtime":"%s","price":%d.%02d,"item":"item-%d","bidder":%d}`, ts, i%100, i%97, i%1000, i),
			})
		}
		kafkatest.ProduceTo(b, bs, topic, recs...)
	}
}

// BenchmarkKafkaFilterKafka runs a bounded Kafka → filter → Kafka job over
// b.N rows (4 partitions, JSON) against the in-process cluster. Half of the
// rows pass the filter. rows/s counts input rows.
func BenchmarkKafkaFilterKafka(b *testing.B) {
	const partitions = 4
	bs := kafkatest.Start(b, partitions)
	run := 0 // names the topics of each run apart
	for _, guarantee := range []string{"at-least-once", "exactly-once"} {
		b.Run(guarantee, func(b *testing.B) {
			b.ReportAllocs()
			run++
			in, out := "in-"+strconv.Itoa(run), "out-"+strconv.Itoa(run)
			kafkatest.CreateTopic(b, bs, in, partitions)
			kafkatest.CreateTopic(b, bs, out, partitions)
			produceBids(b, bs, in, partitions, b.N)
			src := fmt.Sprintf(`
CREATE TABLE bids (bidtime TIMESTAMP(3), price DECIMAL(10, 2), item STRING, bidder BIGINT) WITH (
  'connector' = 'kafka', 'topic' = '%[1]s', 'properties.bootstrap.servers' = '%[3]s',
  'scan.bounded.mode' = 'latest-offset', 'format' = 'json');
CREATE TABLE expensive (bidtime TIMESTAMP(3), price DECIMAL(10, 2), item STRING) WITH (
  'connector' = 'kafka', 'topic' = '%[2]s', 'properties.bootstrap.servers' = '%[3]s', 'format' = 'json',
  'sink.delivery-guarantee' = '%[4]s', 'sink.transactional-id-prefix' = 'bench-%[2]s');
INSERT INTO expensive SELECT bidtime, price, item FROM bids WHERE price >= 50;
`, in, out, bs, guarantee)
			e, err := sluice.Open(sluice.Options{Stdout: io.Discard})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			b.ResetTimer()
			start := time.Now()
			if err := e.Run(context.Background(), "bench.sql", []byte(src)); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "rows/s")
		})
	}
}

func benchEnv(b *testing.B) connector.Env {
	f := format.NewRegistry()
	for _, x := range builtin.Formats() {
		if err := f.Register(x); err != nil {
			b.Fatal(err)
		}
	}
	return connector.Env{Formats: f}
}

var bidSchema = types.NewSchema(
	types.Column{Name: "bidtime", Type: types.Timestamp(3)},
	types.Column{Name: "price", Type: types.Decimal(10, 2)},
	types.Column{Name: "item", Type: types.String},
	types.Column{Name: "bidder", Type: types.BigInt},
)

// BenchmarkSourceRead measures one reader decoding JSON records.
func BenchmarkSourceRead(b *testing.B) {
	b.ReportAllocs()
	bs := kafkatest.Start(b, 1)
	topic := "read-" + strconv.Itoa(b.N)
	kafkatest.CreateTopic(b, bs, topic, 1)
	produceBids(b, bs, topic, 1, b.N)
	reg := connector.NewRegistry()
	for _, f := range builtin.Connectors() {
		reg.Register(f)
	}
	s, err := reg.Source(connector.Table{Name: "bids", Schema: bidSchema, Options: connector.Options{
		"connector": "kafka", "topic": topic, "properties.bootstrap.servers": bs,
		"scan.bounded.mode": "latest-offset", "format": "json",
	}}, benchEnv(b))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ResetTimer()
	r, err := s.Open(ctx, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	batch := types.NewBatch(1024, 4)
	n := 0
	for {
		batch.Reset()
		err := r.Read(ctx, batch, 1024)
		n += len(batch.Rows)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	if n != b.N {
		b.Fatalf("read %d rows of %d", n, b.N)
	}
}

// BenchmarkSinkWrite measures encoding and producing rows, batches of 1024,
// waiting for all acknowledgements at the end.
func BenchmarkSinkWrite(b *testing.B) {
	for _, guarantee := range []string{"at-least-once", "exactly-once"} {
		b.Run(guarantee, func(b *testing.B) {
			b.ReportAllocs()
			bs := kafkatest.Start(b, 4, "out")
			reg := connector.NewRegistry()
			for _, f := range builtin.Connectors() {
				reg.Register(f)
			}
			s, err := reg.Sink(connector.Table{Name: "out", Schema: bidSchema, Options: connector.Options{
				"connector": "kafka", "topic": "out", "properties.bootstrap.servers": bs, "format": "json",
				"sink.delivery-guarantee": guarantee, "sink.transactional-id-prefix": "bench",
			}}, benchEnv(b))
			if err != nil {
				b.Fatal(err)
			}
			batch := types.NewBatch(1024, 4)
			for i := range 1024 {
				v := batch.AddRow(types.Insert, types.NoOrigin, 4)
				v[0] = types.TimestampValue(int64(i) * 1000)
				v[1] = types.DecimalValue(int64(i), 2)
				v[2] = types.StringValue("item-" + strconv.Itoa(i))
				v[3] = types.BigIntValue(int64(i))
			}
			ctx := context.Background()
			b.ResetTimer()
			for left := b.N; left > 0; left -= len(batch.Rows) {
				if left < len(batch.Rows) {
					batch.Rows = batch.Rows[:left]
				}
				if err := s.Write(ctx, batch); err != nil {
					b.Fatal(err)
				}
			}
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
