package crash_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/sluicesql/sluice/internal/amqptest"
)

const (
	// rabbitEvents is how many input messages the test publishes.
	rabbitEvents = 20_000
	// rabbitKeys distinct values of k.
	rabbitKeys = 50
	// rabbitKills is how many times the job is killed with SIGKILL while
	// the input is published.
	rabbitKills = 6
	// rabbitPrefetch is the source's 'prefetch-count': no more
	// deliveries than that are unacknowledged at once, which bounds what
	// a kill can make the broker deliver twice.
	rabbitPrefetch = 1000
)

// TestCrashRabbitMQ is the crash test of the rabbitmq connector: a broker
// that outlives the jobs (the in-process amqptest broker in the test's
// process, or the RabbitMQ of SLUICE_AMQP_URI), a stream of messages
// published while a job reads them, aggregates them in event-time
// windows with its state in a 'state.dir', and publishes the windows to
// another queue; the job is killed with SIGKILL rabbitKills times at
// random moments and restarted, and then run until every window is out.
//
// The source is at-least-once: a message is acknowledged once the
// checkpoint that holds its effect completed, so a kill loses nothing,
// and what was read after the last completed checkpoint is delivered
// again to a state that does not hold it. Two kinds of duplicates are
// documented, and the test tells them apart:
//
//   - a message whose checkpoint completed but whose acknowledgement did
//     not reach the broker before the kill is delivered again and counted
//     twice in its window (COUNT(*) above the input's), at most
//     'prefetch-count' messages a kill;
//   - a window the job published after its last completed checkpoint is
//     published again by the next run (the sink is at-least-once).
//
// The offset dedup of the stateful operators cannot remove the first
// kind: a queue gives its messages no position, so the source numbers
// its rows as it reads them, and a redelivered message has a new number.
// So every window must hold every id of its input (COUNT(DISTINCT id)
// exact: nothing lost, nothing foreign) and the surplus of COUNT(*) must
// stay within the bound.
func TestCrashRabbitMQ(t *testing.T) {
	rng, dir := crashSetup(t, 0xab1d, "rabbitmq")
	bin := buildSluice(t, dir, os.Getenv("SLUICE_CRASH_RACE") == "1")
	uri := os.Getenv("SLUICE_AMQP_URI")
	if uri == "" {
		uri = amqptest.Start(t).URL
		t.Logf("in-process AMQP broker at %s", uri)
	} else {
		t.Logf("RabbitMQ at %s", uri)
	}
	conn, err := amqp.Dial(uri)
	if err != nil {
		t.Fatalf("cannot connect to the broker: %v", err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	suffix := fmt.Sprint(time.Now().UnixNano())
	in, out := "sluice-crash-in-"+suffix, "sluice-crash-out-"+suffix
	for _, q := range []string{in, out} {
		if _, err := ch.QueueDeclare(q, true, false, false, false, nil); err != nil {
			t.Fatal(err)
		}
		defer ch.QueueDelete(q, false, false, false)
	}

	sqlPath := filepath.Join(dir, "rabbitmq.sql")
	sql := strings.NewReplacer("$DIR", filepath.Join(dir, "rabbitmq-state"), "$URI", uri, "$IN", in, "$OUT", out,
		"$PREFETCH", fmt.Sprint(rabbitPrefetch)).Replace(`
SET 'state.dir' = '$DIR';
SET 'pipeline.name' = 'rabbitmq-crash';
SET 'execution.checkpointing.interval' = '100ms';
CREATE TABLE events (id BIGINT, ts TIMESTAMP(3), k STRING, v BIGINT, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)
  WITH ('connector' = 'rabbitmq', 'uri' = '$URI', 'queue' = '$IN', 'format' = 'json', 'prefetch-count' = '$PREFETCH',
  'reconnect.initial-backoff' = '20 ms', 'reconnect.max-backoff' = '500 ms');
CREATE TABLE windows (window_start TIMESTAMP(3), k STRING, n BIGINT, d BIGINT, total BIGINT)
  WITH ('connector' = 'rabbitmq', 'uri' = '$URI', 'queue' = '$OUT', 'format' = 'json');
INSERT INTO windows
SELECT window_start, k, COUNT(*), COUNT(DISTINCT id), SUM(v)
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND))
GROUP BY window_start, window_end, k;
`)
	if err := os.WriteFile(sqlPath, []byte(sql), 0o644); err != nil {
		t.Fatal(err)
	}

	// The input, in event-time order, and the windows it makes.
	type win struct{ n, total int64 }
	want := map[string]win{}
	var input [][]byte
	for id := range int64(rabbitEvents) {
		ts := eventBase.Add(time.Duration(id) * 5 * time.Millisecond)
		k := fmt.Sprintf("k%02d", rng.IntN(rabbitKeys))
		v := rng.Int64N(1000)
		input = append(input, fmt.Appendf(nil, `{"id":%d,"ts":"%s","k":"%s","v":%d}`, id, ts.Format("2006-01-02 15:04:05.000"), k, v))
		key := ts.Truncate(10*time.Second).Format("2006-01-02 15:04:05.000") + "|" + k
		w := want[key]
		w.n++
		w.total += v
		want[key] = w
	}
	// A last event a day later closes every window.
	input = append(input, fmt.Appendf(nil, `{"id":-1,"ts":"%s","k":"closer","v":0}`, eventBase.Add(24*time.Hour).Format("2006-01-02 15:04:05.000")))

	// The output, read as it comes.
	got := map[string][]win{}
	var gotMu sync.Mutex
	outConn, err := amqp.Dial(uri)
	if err != nil {
		t.Fatal(err)
	}
	defer outConn.Close()
	och, _ := outConn.Channel()
	deliveries, err := och.Consume(out, "", true, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	bad := make(chan string, 1)
	go func() {
		for d := range deliveries {
			var row struct {
				WindowStart string `json:"window_start"`
				K           string
				N, D, Total int64
			}
			if err := json.Unmarshal(d.Body, &row); err != nil {
				select {
				case bad <- string(d.Body):
				default:
				}
				continue
			}
			ws, err := parseTime(row.WindowStart)
			if err != nil {
				select {
				case bad <- string(d.Body):
				default:
				}
				continue
			}
			key := ws.Format("2006-01-02 15:04:05.000") + "|" + row.K
			gotMu.Lock()
			if row.D != want[key].n {
				select {
				case bad <- fmt.Sprintf("window %s: %d distinct ids, want %d (%s)", key, row.D, want[key].n, d.Body):
				default:
				}
			}
			got[key] = append(got[key], win{row.N, row.Total})
			gotMu.Unlock()
		}
	}()

	// The input is published while the job runs, and is killed.
	pub, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := pub.Confirm(false); err != nil {
		t.Fatal(err)
	}
	published := make(chan error, 1)
	go func() {
		const batch = 250
		for i := 0; i < len(input); i += batch {
			var dcs []*amqp.DeferredConfirmation
			for _, body := range input[i:min(i+batch, len(input))] {
				dc, err := pub.PublishWithDeferredConfirmWithContext(context.Background(), "", in, true, false,
					amqp.Publishing{Body: body, DeliveryMode: amqp.Persistent, ContentType: "application/json"})
				if err != nil {
					published <- err
					return
				}
				dcs = append(dcs, dc)
			}
			for _, dc := range dcs {
				if !dc.Wait() {
					published <- fmt.Errorf("the broker refused an input message")
					return
				}
			}
			time.Sleep(time.Duration(20+rng.IntN(60)) * time.Millisecond)
		}
		published <- nil
	}()

	kills := 0
	for run := 0; kills < rabbitKills; run++ {
		p := startJob(t, bin, sqlPath, filepath.Join(dir, fmt.Sprintf("rabbitmq-run%d.log", run)))
		delay := time.Duration(300+rng.IntN(900)) * time.Millisecond
		res := p.killAfter(t, delay)
		t.Logf("run %d %s", run, res)
		if !res.killed {
			t.Fatalf("run %d ended by itself: %s\n%s", run, res, tail(filepath.Join(dir, fmt.Sprintf("rabbitmq-run%d.log", run))))
		}
		kills++
	}
	if err := <-published; err != nil {
		t.Fatal(err)
	}

	// The last run goes until every window is out, then stops (SIGTERM).
	last := filepath.Join(dir, "rabbitmq-final.log")
	p := startJob(t, bin, sqlPath, last)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		gotMu.Lock()
		n := len(got)
		gotMu.Unlock()
		if n >= len(want) {
			break
		}
		select {
		case b := <-bad:
			t.Fatalf("output: %s", b)
		case <-p.done:
			t.Fatalf("the last run ended: %s\n%s", p.result(false), tail(last))
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d windows out after 2 minutes\n%s", n, len(want), tail(last))
		}
	}
	// Every window may be out before the last run started (the killed
	// runs published them): wait for it to consume, so that it stops on
	// SIGTERM rather than dies of it before it has set up.
	for {
		q, err := ch.QueueDeclarePassive(in, true, false, false, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		if q.Consumers == 1 && q.Messages == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the last run does not consume: %d consumers, %d messages ready\n%s", q.Consumers, q.Messages, tail(last))
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	if res := p.wait(t, time.Minute); !res.ok() {
		t.Fatalf("the last run %s\n%s", res, tail(last))
	}
	time.Sleep(200 * time.Millisecond) // the consumer takes what the last run published
	select {
	case b := <-bad:
		t.Fatalf("output: %s", b)
	default:
	}

	gotMu.Lock()
	defer gotMu.Unlock()
	var missing, foreign []string
	extraIn, extraOut := int64(0), 0
	for key, w := range want {
		rows := got[key]
		if len(rows) == 0 {
			missing = append(missing, key)
			continue
		}
		extraOut += len(rows) - 1
		for _, r := range rows {
			if r.n < w.n || r.total < w.total {
				t.Errorf("window %s: count %d, sum %d; the input has %d, %d: a message lost", key, r.n, r.total, w.n, w.total)
			}
		}
		extraIn += rows[len(rows)-1].n - w.n
	}
	for key := range got {
		if _, ok := want[key]; !ok {
			foreign = append(foreign, key)
		}
	}
	sort.Strings(missing)
	sort.Strings(foreign)
	if len(missing) > 0 || len(foreign) > 0 {
		t.Fatalf("%d windows missing (%v), %d foreign (%v)", len(missing), missing[:min(5, len(missing))], len(foreign), foreign[:min(5, len(foreign))])
	}
	t.Logf("%d kills; %d windows; %d input messages counted twice (redelivered after a completed checkpoint whose acknowledgement the kill cut off), %d windows published twice",
		kills, len(want), extraIn, extraOut)
	if bound := int64(kills * rabbitPrefetch); extraIn > bound {
		t.Errorf("%d messages counted twice, more than %d kills × 'prefetch-count' %d", extraIn, kills, rabbitPrefetch)
	}
	// The last run stopped normally: its final commit acknowledged the rest.
	q, err := ch.QueueDeclarePassive(in, true, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if q.Messages != 0 {
		t.Errorf("%d input messages left unacknowledged", q.Messages)
	}
}
