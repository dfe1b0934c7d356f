package crash_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicesql/sluice/internal/natstest"
)

const (
	// natsRows input rows, natsKeys distinct keys, an event every
	// natsStep of event time: 10-second windows of natsKeys keys.
	natsRows = 120_000
	natsKeys = 20
	natsStep = 5 * time.Millisecond
	// natsKills is how many times each job is killed with SIGKILL before
	// the run that is let finish.
	natsKills = 6
)

// natsJobSQL reads the input stream through a JetStream source ($SCAN
// chooses its consumer), folds it into 10-second tumbling windows per
// key, and publishes each closed window into an exactly-once JetStream
// sink.
const natsJobSQL = `
SET 'state.dir' = '$DIR/state';
SET 'pipeline.name' = 'nats-$MODE';
SET 'execution.checkpointing.interval' = '100ms';
CREATE TABLE events (
  id BIGINT, ts TIMESTAMP(3), k STRING, v BIGINT,
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'nats', 'servers' = '$URL', 'jetstream.stream' = 'IN', 'subject' = 'in.>', 'format' = 'json' $SCAN);
CREATE TABLE out (
  window_start TIMESTAMP(3), window_end TIMESTAMP(3), k STRING, n BIGINT, total BIGINT, lo BIGINT, hi BIGINT
) WITH ('connector' = 'nats', 'servers' = '$URL', 'jetstream.stream' = '$OUT', 'subject' = 'out.$MODE', 'format' = 'json');
INSERT INTO out
SELECT window_start, window_end, k, COUNT(*), SUM(v), MIN(v), MAX(v)
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND))
GROUP BY window_start, window_end, k;`

// TestCrashNATS is the crash test of the NATS connector: JetStream
// source → tumbling-window aggregation → JetStream sink, in `sluice run`
// processes with their state in a 'state.dir', killed with SIGKILL
// mid-stream (once while starting, then each time the output has grown
// by a share of what is expected) and restarted; a last run is let
// finish the input. The nats-server runs in the test's process, so it
// outlives the jobs. The output stream must then hold exactly the
// windows plain Go code computes from the input: each once, none
// missing. Two jobs: the source through an ordered consumer (resumed
// after the checkpoint's stream sequence) and through a durable one
// (acknowledged after checkpoints).
//
//	SLUICE_CRASH_TEST=1 go test -count=1 -run NATS ./test/crash
func TestCrashNATS(t *testing.T) {
	rng, dir := crashSetup(t, 0x7a75, "nats")
	bin := buildSluice(t, dir, os.Getenv("SLUICE_CRASH_RACE") == "1")
	srv := natstest.Start(t)
	js := srv.JetStream(t)
	in := natsInput(rng)
	want := expectWindow(in)
	for _, mode := range []string{"ordered", "durable"} {
		t.Run(mode, func(t *testing.T) {
			out := "OUT_" + strings.ToUpper(mode)
			// Each job reads an input stream of its own, published as it runs.
			natstest.CreateStream(t, js, jetstream.StreamConfig{Name: "IN", Subjects: []string{"in.>"}})
			defer js.DeleteStream(context.Background(), "IN")
			// The window covers the whole test: a republish after a
			// restart always falls within it.
			natstest.CreateStream(t, js, jetstream.StreamConfig{Name: out, Subjects: []string{"out." + mode}, Duplicates: 10 * time.Minute})
			scan := ""
			if mode == "durable" {
				scan = ", 'jetstream.durable' = 'crash'"
			}
			jdir := filepath.Join(dir, mode)
			if err := os.MkdirAll(jdir, 0o755); err != nil {
				t.Fatal(err)
			}
			sql := strings.NewReplacer("$DIR", jdir, "$MODE", mode, "$URL", srv.URL, "$SCAN", scan, "$OUT", out).Replace(natsJobSQL)
			sqlPath := filepath.Join(jdir, "job.sql")
			if err := os.WriteFile(sqlPath, []byte(sql), 0o644); err != nil {
				t.Fatal(err)
			}
			runNATSJob(t, bin, jdir, sqlPath, js, out, in, len(want), rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64())))
			got := map[string]int{}
			msgs := natstest.ReadStream(t, js, out)
			for _, m := range msgs {
				row, err := canonWindow(&kgo.Record{Value: []byte(m.Data)})
				if err != nil {
					t.Fatalf("output sequence %d: %v: %s", m.Seq, err, m.Data)
				}
				got[row]++
			}
			minus, plus := diffMultisets(want, got)
			if len(minus) > 0 || len(plus) > 0 || len(msgs) != len(want) {
				short, full := formatDiff(want, got, minus, plus)
				t.Errorf("%d output messages, want %d; %s (full diff: %s)", len(msgs), len(want), short, saveDiff(t, jdir, mode, full))
			}
		})
	}
}

// natsInput makes the input: ids rising, event times rising by natsStep,
// keys and values drawn from rng; then one last event far in the future
// (key "end"), whose watermark closes every window of the others.
func natsInput(rng *rand.Rand) []event {
	in := make([]event, natsRows)
	for i := range in {
		in[i] = event{id: int64(i), ts: eventBase.Add(time.Duration(i) * natsStep),
			k: fmt.Sprintf("k%02d", rng.IntN(natsKeys)), v: rng.Int64N(1000)}
	}
	return in
}

// publishEvents publishes events (and, with end, the closing event)
// into the stream IN, asynchronously, and waits for every
// acknowledgement.
func publishEvents(t *testing.T, js jetstream.JetStream, events []event, end bool) error {
	if end {
		last := events[len(events)-1]
		events = append(events[:len(events):len(events)], event{id: last.id + 1, ts: last.ts.Add(time.Hour), k: "end"})
	}
	for _, e := range events {
		if _, err := js.PublishAsync(fmt.Sprintf("in.%d", e.id%4), e.json()); err != nil {
			return err
		}
	}
	select {
	case <-js.PublishAsyncComplete():
		return nil
	case <-time.After(2 * time.Minute):
		return fmt.Errorf("the input was not acknowledged within 2 minutes")
	}
}

// runNATSJob runs the job natsKills+1 times, publishing a share of the
// input while each run reads. Each run but the last is killed: the first
// while it starts, the others a random moment after it has published
// some windows. The last run is let publish every expected window (and a
// little longer, for anything it would publish twice) before it is
// stopped.
func runNATSJob(t *testing.T, bin, dir, sqlPath string, js jetstream.JetStream, out string, in []event, want int, rng *rand.Rand) {
	t.Helper()
	count := func() int {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		st, err := js.Stream(ctx, out)
		if err != nil {
			return -1
		}
		info, err := st.Info(ctx)
		if err != nil {
			return -1
		}
		return int(info.State.Msgs)
	}
	// waitFor waits for the output to reach n messages while p runs.
	waitFor := func(p *proc, n int) bool {
		deadline := time.Now().Add(runTimeout)
		for count() < n {
			select {
			case <-p.done:
				return false
			case <-time.After(5 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				return false
			}
		}
		return true
	}
	chunk := (len(in) + natsKills) / (natsKills + 1)
	for i := range natsKills + 1 {
		log := filepath.Join(dir, fmt.Sprintf("run%d.log", i))
		before := count()
		p := startJob(t, bin, sqlPath, log)
		published := make(chan error, 1)
		go func() {
			published <- publishEvents(t, js, in[i*chunk:min(len(in), (i+1)*chunk)], i == natsKills)
		}()
		if i == natsKills {
			ok := waitFor(p, want)
			time.Sleep(time.Second) // a duplicate would come now
			p.cmd.Process.Kill()
			<-p.done
			if err := <-published; err != nil {
				t.Fatal(err)
			}
			if !ok {
				t.Fatalf("the last run published %d of %d windows\n%s", count(), want, tail(log))
			}
			t.Logf("run %d: %d windows published; stopped", i, count())
			return
		}
		var r runResult
		if i == 0 {
			r = p.killAfter(t, time.Duration(50+rng.IntN(400))*time.Millisecond) // while it starts
		} else {
			if !waitFor(p, before+1) {
				p.cmd.Process.Kill()
				<-p.done
				t.Fatalf("run %d published no window\n%s", i, tail(log))
			}
			r = p.killAfter(t, time.Since(p.start)+time.Duration(rng.IntN(300))*time.Millisecond)
		}
		if err := <-published; err != nil {
			t.Fatal(err)
		}
		if !r.killed {
			t.Fatalf("run %d %s\n%s", i, r, tail(log))
		}
		t.Logf("run %d %s with %d windows published (%d before it)", i, r, count(), before)
	}
}
