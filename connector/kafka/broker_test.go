package kafka

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/internal/kafkatest"
	"github.com/sluicesql/sluice/internal/logtest"
	"github.com/sluicesql/sluice/types"
)

// TestBrokerDownAtStart: a table whose broker is down. As Flink's Kafka
// clients do, the source and the sink keep trying until
// 'properties.default.api.timeout.ms' has passed (60 s by default), and
// say at once, in the job's log, that they cannot connect, to what, and
// that they keep trying; the error they end with names the address.
func TestBrokerDownAtStart(t *testing.T) {
	addr := kafkatest.ClosedAddr(t)
	for _, kind := range []string{"source", "sink"} {
		t.Run(kind, func(t *testing.T) {
			var log logtest.Lines
			e := env(t)
			e.Logf = log.Logf
			tbl := table("t", bidSchema(), addr, "t", connector.Options{"properties.default.api.timeout.ms": "1000"})
			var err error
			if kind == "source" {
				_, err = registry().Source(tbl, e)
			} else {
				_, err = registry().Sink(tbl, e)
			}
			if err == nil || !strings.Contains(err.Error(), "cannot connect to Kafka at "+addr) ||
				!strings.Contains(err.Error(), "'properties.default.api.timeout.ms'") {
				t.Fatalf("got error %v, want one naming %s and the timeout", err, addr)
			}
			want := "kafka table 't': cannot connect to Kafka broker " + addr + " ("
			if got := log.String(); !strings.Contains(got, want) || !strings.Contains(got, "still trying") {
				t.Errorf("the job's log does not say at once what is wrong (want %q):\n%s", want, got)
			}
		})
	}
}

// TestBrokerDownWhileRunning: the broker goes down under a running reader
// and sink. The clients retry for as long as they are let (Flink's do
// too); the job's log says at once that they cannot connect, and to what.
func TestBrokerDownWhileRunning(t *testing.T) {
	bs, stop := kafkatest.StartStoppable(t, 1, "in", "out")
	produceNumbered(t, bs, "in", time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC), 0, 2)
	var log logtest.Lines
	e := env(t)
	e.Logf = log.Logf
	src, err := registry().Source(table("in", bidSchema(), bs, "in", nil), e)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r, err := src.Open(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	readN(t, r, 2)
	snk, err := registry().Sink(table("out", bidSchema(), bs, "out", nil), e)
	if err != nil {
		t.Fatal(err)
	}
	// Closing would wait for the record to be delivered, for two minutes.
	defer func() { go snk.Close() }()
	stop()
	b := types.NewBatch(1, 2)
	b.AddRow(types.Insert, types.NoOrigin, 2)[0] = types.Int32Value(1)
	if err := snk.Write(ctx, b); err != nil {
		t.Fatal(err)
	}
	want := "kafka table 'in': cannot connect to Kafka broker " + bs
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(log.String(), want) || !strings.Contains(log.String(), "kafka table 'out': cannot connect to Kafka broker "+bs) {
		if time.Now().After(deadline) {
			t.Fatalf("the job's log says nothing of the broker being down (want %q):\n%s", want, log.String())
		}
		if err := r.Read(ctx, types.NewBatch(1, 2), 1); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.Contains(log.String(), "still trying") {
		t.Errorf("the job's log does not say that the clients keep trying:\n%s", log.String())
	}
}
