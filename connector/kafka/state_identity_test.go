package kafka_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/internal/kafkatest"
)

// With the state in Kafka, two unrelated jobs whose sinks share a name
// used to share a changelog: the second picked up the first one's
// offsets and counts. Its state belongs to what it reads now: the job
// over another topic is refused, saying which.
func TestKafkaStateBelongsToItsJob(t *testing.T) {
	bs := kafkatest.Start(t, 1, "a", "b")
	for _, topic := range []string{"a", "b"} {
		var recs []*kgo.Record
		for i := range 10 {
			recs = append(recs, &kgo.Record{Value: fmt.Appendf(nil, `{"k":"%s%d"}`, topic, i%2)})
		}
		kafkatest.ProduceTo(t, bs, topic, recs...)
	}
	job := func(topic string) (string, error) {
		src := strings.ReplaceAll(`
SET 'state.backend' = 'kafka';
SET 'state.kafka.bootstrap.servers' = '$BOOTSTRAP';
CREATE TABLE src (k STRING) WITH ('connector' = 'kafka', 'topic' = '`+topic+`',
  'properties.bootstrap.servers' = '$BOOTSTRAP', 'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset', 'format' = 'json');
CREATE TABLE out (k STRING, n BIGINT) WITH ('connector' = 'print');
INSERT INTO out SELECT k, COUNT(*) FROM src GROUP BY k;`, "$BOOTSTRAP", bs)
		var out bytes.Buffer
		e, err := sluice.Open(sluice.Options{Stdout: &out})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		err = e.Run(ctx, "job.sql", []byte(src))
		return out.String(), err
	}
	out, err := job("a")
	if err != nil || !strings.Contains(out, "[a0, 5]") {
		t.Fatalf("first job: %v\n%s", err, out)
	}
	out, err = job("b")
	if err == nil || !strings.Contains(err.Error(), "topic=b") || !strings.Contains(err.Error(), "topic=a") {
		t.Fatalf("a job over topic b ran over the state of a job over topic a: %v\n%s", err, out)
	}
}

// An exactly-once Kafka sink commits its own transaction after the
// checkpoint of a local 'state.dir': a crash between the two would lose
// that checkpoint's output. It is refused, saying what to do.
func TestKafkaExactlyOnceNeedsKafkaState(t *testing.T) {
	bs := kafkatest.Start(t, 1, "in", "out")
	src := strings.ReplaceAll(`
SET 'state.dir' = '`+t.TempDir()+`';
CREATE TABLE src (k STRING) WITH ('connector' = 'kafka', 'topic' = 'in',
  'properties.bootstrap.servers' = '$BOOTSTRAP', 'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset', 'format' = 'json');
CREATE TABLE dst (k STRING) WITH ('connector' = 'kafka', 'topic' = 'out',
  'properties.bootstrap.servers' = '$BOOTSTRAP', 'format' = 'json',
  'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = 'dst');
INSERT INTO dst SELECT k FROM src;`, "$BOOTSTRAP", bs)
	e, err := sluice.Open(sluice.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	err = e.Run(context.Background(), "job.sql", []byte(src))
	if err == nil || !strings.Contains(err.Error(), "'state.backend' = 'kafka'") {
		t.Fatalf("got %v", err)
	}
}
