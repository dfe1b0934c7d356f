package sluice_test

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/internal/cputime"
	"github.com/sluicesql/sluice/internal/kafkatest"
)

// BenchmarkSharedSourceKafka runs 2 and 4 jobs started one after the
// other over one JSON Kafka topic of 200,000 records (2 partitions, an
// in-process broker), each writing every row to a blackhole, until every
// job has read every record: with the engine's shared readers (one fetch
// and decode per record) and with a reader per job. The in-process
// broker's work is in the CPU time too.
//
//	go test . -run '^$' -bench SharedSourceKafka -benchtime 3x
func BenchmarkSharedSourceKafka(b *testing.B) {
	const n = 200_000
	bs := kafkatest.Start(b, 2, "in")
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Partition: int32(i % 2),
			Value: fmt.Appendf(nil, `{"id":%d,"s":"some text %d","a":%d.5,"b":true,"c":"2024-01-01 00:00:00"}`, i, i, i)}
	}
	kafkatest.ProduceTo(b, bs, "in", recs...)
	ddl := `CREATE TABLE src (id BIGINT, s STRING, a DOUBLE, b BOOLEAN, c TIMESTAMP(3)) WITH ('connector' = 'kafka',
  'topic' = 'in', 'properties.bootstrap.servers' = '` + bs + `', 'scan.startup.mode' = 'earliest-offset', 'format' = 'json');
CREATE TABLE o (id BIGINT, s STRING, a DOUBLE, b BOOLEAN, c TIMESTAMP(3)) WITH ('connector' = 'blackhole');
`
	for _, jobs := range []int{2, 4} {
		for _, shared := range []bool{true, false} {
			b.Run(fmt.Sprintf("jobs=%d/shared=%v", jobs, shared), func(b *testing.B) {
				cpu := cputime.Seconds()
				for range b.N {
					e, err := sluice.Open(sluice.Options{Stdout: io.Discard,
						Config: map[string]string{"pipeline.shared-source": fmt.Sprint(shared)}})
					if err != nil {
						b.Fatal(err)
					}
					if _, err := e.Exec(context.Background(), "ddl.sql", []byte(ddl)); err != nil {
						b.Fatal(err)
					}
					var js []*sluice.Job
					for range jobs {
						res, err := e.Exec(context.Background(), "job.sql", []byte(`INSERT INTO o SELECT * FROM src;`))
						if err != nil {
							b.Fatal(err)
						}
						js = append(js, res[0].Job)
					}
					for _, j := range js {
						for j.Metrics.RowsIn.Load() < n {
							time.Sleep(time.Millisecond)
						}
					}
					e.Close()
				}
				b.ReportMetric(float64(jobs*n*b.N)/b.Elapsed().Seconds(), "job-rows/s")
				if c := cputime.Seconds() - cpu; c > 0 {
					b.ReportMetric(float64(jobs*n*b.N)/c, "job-rows/cpu-s")
				}
			})
		}
	}
}
