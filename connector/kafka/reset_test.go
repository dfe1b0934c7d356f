package kafka

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicesql/sluice/internal/kafkatest"
	"github.com/sluicesql/sluice/internal/logtest"
)

// TestReadThroughRecreatedTopic: the topic a reader is reading is deleted
// and recreated with fewer records. The broker answers OFFSET_OUT_OF_RANGE
// and the reader resets as its startup mode says (earliest here), as
// Flink's consumer does; the job's log says so, and the new log's rows
// get origins above the old ones (the partition's next epoch), so that
// stateful operators do not drop them as replays.
func TestReadThroughRecreatedTopic(t *testing.T) {
	bs := kafkatest.Start(t, 1, "n")
	base := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	produceNumbered(t, bs, "n", base, 0, 10)
	var log logtest.Lines
	e := env(t)
	e.Logf = log.Logf
	s, err := registry().Source(table("n", bidSchema(), bs, "n", nil), e)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r, err := s.Open(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := readN(t, r, 10); got[9].Origin.Offset != 9 {
		t.Fatalf("origin of the 10th row: %d", got[9].Origin.Offset)
	}
	recreateTopic(t, bs, "n")
	produceNumbered(t, bs, "n", base, 100, 3)
	rows := readN(t, r, 3)
	for i, row := range rows {
		if id := row.Vals[0].Int(); id != int64(100+i) {
			t.Errorf("row %d of the new log has id %d, want %d", i, id, 100+i)
		}
		if want := int64(1)<<epochShift + int64(i); row.Origin.Offset != want {
			t.Errorf("row %d has origin %d, want %d (offset %d in epoch 1)", i, row.Origin.Offset, want, i)
		}
	}
	if !strings.Contains(log.String(), "topic n was deleted and recreated while partition 0 was read at offset 10; reading its new log from the earliest offset, 0") {
		t.Errorf("the job's log does not say what happened:\n%s", log.String())
	}
	// A checkpoint taken now resumes in the new log.
	if off := s.(*Source).ResumeOffset(rows[2].Origin.Offset); off != 3 {
		t.Errorf("resume offset %d, want 3", off)
	}
}

func recreateTopic(t *testing.T, bs, topic string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), kafkatest.Timeout)
	defer cancel()
	resp, err := kafkatest.Admin(t, bs).DeleteTopics(ctx, topic)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("cannot delete topic %s: %v", topic, err)
	}
	kafkatest.CreateTopic(t, bs, topic, 1)
}

// TestDataLossReport: the client reports that a partition's offset left
// its log while it was read (kgo.ErrDataLoss: the broker lost records,
// or the log was truncated) and where it reset to. A reset to a lower
// offset starts the partition's next epoch; the job's log hears of it
// either way.
func TestDataLossReport(t *testing.T) {
	bs := kafkatest.Start(t, 1, "n")
	var log logtest.Lines
	e := env(t)
	e.Logf = log.Logf
	s, err := registry().Source(table("n", bidSchema(), bs, "n", nil), e)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r, err := s.Open(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rd := r.(*Reader)
	if err := rd.fetchError(ctx, &kgo.ErrDataLoss{Topic: "n", ConsumedTo: 50, ResetTo: 60}); err != nil || rd.epoch != 0 {
		t.Fatalf("a reset forward: err %v, epoch %d", err, rd.epoch)
	}
	if err := rd.fetchError(ctx, &kgo.ErrDataLoss{Topic: "n", ConsumedTo: 70, ResetTo: 0}); err != nil || rd.epoch != 1 || rd.base != 1<<epochShift {
		t.Fatalf("a reset back: err %v, epoch %d, base %d", err, rd.epoch, rd.base)
	}
	want := []string{
		"kafka table 'n': topic n partition 0: records from offset 50 on were lost before the job read them (retention deleted them, or the broker lost them); reading on from offset 60",
		"kafka table 'n': topic n partition 0: offset 70 is beyond the end of the log now: the topic was deleted and recreated, or truncated; reading on from offset 0",
	}
	for _, w := range want {
		if !strings.Contains(log.String(), w) {
			t.Errorf("the job's log lacks %q:\n%s", w, log.String())
		}
	}
}
