package rabbitmq_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sluicesql/sluice/internal/amqptest"
	"github.com/sluicesql/sluice/internal/enginetest"
)

// waitQueue waits up to 10 s for a queue's counts to be want.
func waitQueue(t testing.TB, b *amqptest.Broker, q string, want amqptest.QueueStats) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, _ := b.Queue(q)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue '%s': %+v, want %+v", q, got, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func publishN(t testing.TB, b *amqptest.Broker, q string, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		if n, err := b.Publish("", q, fmt.Appendf(nil, `{"n":%d}`, i), amqptest.Properties{DeliveryMode: 2}); err != nil || n != 1 {
			t.Fatalf("publish %d: %d queues, %v", i, n, err)
		}
	}
}

// TestSourceMetadata reads a queue with the delivery's properties as
// METADATA columns.
func TestSourceMetadata(t *testing.T) {
	b := amqptest.Start(t)
	b.DeclareQueue("readings", true)
	e := enginetest.Open(t)
	j := e.Start(t, `
CREATE TABLE readings (
  id INT, temp DOUBLE,
  ex STRING METADATA FROM 'exchange' VIRTUAL,
  rk STRING METADATA FROM 'routing-key' VIRTUAL,
  h MAP<STRING, STRING> METADATA FROM 'headers' VIRTUAL,
  ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL,
  mid STRING METADATA FROM 'message-id' VIRTUAL,
  cid STRING METADATA FROM 'correlation-id' VIRTUAL,
  ct STRING METADATA FROM 'content-type' VIRTUAL,
  tag BIGINT METADATA FROM 'delivery-tag' VIRTUAL,
  re BOOLEAN METADATA FROM 'redelivered' VIRTUAL
) WITH ('connector' = 'rabbitmq', 'uri' = '$URI', 'queue' = 'readings', 'format' = 'json');
CREATE TABLE out (id INT, temp DOUBLE, ex STRING, rk STRING, site STRING, n STRING, ts STRING, mid STRING, cid STRING, ct STRING, tag BIGINT, re BOOLEAN)
  WITH ('connector' = 'print');
INSERT INTO out SELECT id, temp, ex, rk, h['site'], h['n'], CAST(ts AS STRING), mid, cid, ct, tag, re FROM readings WHERE temp > 20;`, "$URI", b.URL)
	b.WaitConsumers("readings", 1, 5*time.Second)
	b.Publish("", "readings", []byte(`{"id":1,"temp":21.5}`), amqptest.Properties{ContentType: "application/json",
		Headers: amqptest.Table{"site": "north", "n": int32(7)}, MessageID: "m-1", CorrelationID: "c-1", Timestamp: time.Unix(1700000000, 0)})
	b.Publish("", "readings", []byte(`{"id":2,"temp":19}`), amqptest.Properties{})
	b.Publish("", "readings", []byte(`{"id":3,"temp":30}`), amqptest.Properties{})
	got := e.Out.WaitLines(t, "+I", 2)
	enginetest.Stop(t, j)
	want := []string{
		"+I[1, 21.5, , readings, north, 7, 2023-11-14 22:13:20.000, m-1, c-1, application/json, 1, FALSE]",
		"+I[3, 30.0, , readings, null, null, null, null, null, null, 3, FALSE]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	waitQueue(t, b, "readings", amqptest.QueueStats{})
}

// checkpointed is a job with durable state and checkpoints, named, so
// that a restart resumes it.
const checkpointed = `
SET 'state.dir' = '$DIR';
SET 'pipeline.name' = 'persist';
SET 'execution.checkpointing.interval' = '$CP';
CREATE TABLE m (n INT, re BOOLEAN METADATA FROM 'redelivered' VIRTUAL) WITH ('connector' = 'rabbitmq', 'uri' = '$URI', 'queue' = 'q',
  'format' = 'json', 'reconnect.initial-backoff' = '10 ms', 'reconnect.max-backoff' = '50 ms');
CREATE TABLE out (n INT, re BOOLEAN) WITH ('connector' = 'print');
INSERT INTO out SELECT * FROM m;`

// TestSourceAcksAfterCheckpoint: a job that takes no checkpoint before
// it is cancelled (as a crash) acknowledged nothing, and the next run gets
// everything again, marked redelivered; a job stopped normally
// acknowledges everything in its final commit.
func TestSourceAcksAfterCheckpoint(t *testing.T) {
	b := amqptest.Start(t)
	b.DeclareQueue("q", true)
	dir := t.TempDir()
	e := enginetest.Open(t)
	j := e.Start(t, checkpointed, "$URI", b.URL, "$DIR", dir, "$CP", "1h")
	b.WaitConsumers("q", 1, 5*time.Second)
	publishN(t, b, "q", 0, 10)
	e.Out.WaitLines(t, "+I", 10)
	// Read, processed, and not acknowledged: no checkpoint holds them.
	waitQueue(t, b, "q", amqptest.QueueStats{Unacked: 10, Consumers: 1})
	j.Cancel()
	<-j.Done()
	e.Close()
	waitQueue(t, b, "q", amqptest.QueueStats{Ready: 10})
	publishN(t, b, "q", 10, 15)

	e2 := enginetest.Open(t)
	j2 := e2.Start(t, checkpointed, "$URI", b.URL, "$DIR", dir, "$CP", "50ms")
	got := e2.Out.WaitLines(t, "+I", 15)
	// Checkpoints complete every 50 ms: what they hold is acknowledged.
	waitQueue(t, b, "q", amqptest.QueueStats{Consumers: 1})
	publishN(t, b, "q", 15, 17)
	got = e2.Out.WaitLines(t, "+I", 17)
	enginetest.Stop(t, j2)
	waitQueue(t, b, "q", amqptest.QueueStats{})
	var want []string
	for i := range 17 {
		want = append(want, fmt.Sprintf("+I[%d, %s]", i, map[bool]string{true: "TRUE", false: "FALSE"}[i < 10]))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestSourceAcksWithoutCheckpoints: without checkpoints, what a read
// returned is acknowledged at the next.
func TestSourceAcksWithoutCheckpoints(t *testing.T) {
	b := amqptest.Start(t)
	b.DeclareQueue("q", false)
	e := enginetest.Open(t)
	j := e.Start(t, `
CREATE TABLE m (n INT) WITH ('connector' = 'rabbitmq', 'uri' = '$URI', 'queue' = 'q', 'format' = 'json', 'prefetch-count' = '5');
CREATE TABLE out (n INT) WITH ('connector' = 'print');
INSERT INTO out SELECT * FROM m;`, "$URI", b.URL)
	b.WaitConsumers("q", 1, 5*time.Second)
	publishN(t, b, "q", 0, 50) // ten times the prefetch: only acknowledgements let them through
	got := e.Out.WaitLines(t, "+I", 50)
	waitQueue(t, b, "q", amqptest.QueueStats{Consumers: 1})
	enginetest.Stop(t, j)
	if len(got) != 50 {
		t.Errorf("got %d rows", len(got))
	}
}

// TestSourceReconnect restarts the broker under a running job: the
// source connects again by itself, which the job's metrics count; what
// it had not acknowledged comes again, and nothing is lost.
func TestSourceReconnect(t *testing.T) {
	b := amqptest.Start(t)
	b.DeclareQueue("q", true)
	dir := t.TempDir()
	e := enginetest.Open(t)
	j := e.Start(t, checkpointed, "$URI", b.URL, "$DIR", dir, "$CP", "50ms")
	b.WaitConsumers("q", 1, 5*time.Second)
	publishN(t, b, "q", 0, 20)
	e.Out.WaitLines(t, "+I", 20)
	b.Stop()
	publishedWhileDown := 0
	b.Restart()
	b.WaitConsumers("q", 1, 10*time.Second)
	publishN(t, b, "q", 20, 40)
	publishedWhileDown = 20
	e.Out.WaitLines(t, "+I[39", 1)
	n := j.Health().Reconnects
	waitQueue(t, b, "q", amqptest.QueueStats{Consumers: 1})
	enginetest.Stop(t, j)
	seen := map[string]int{}
	for _, l := range e.Out.Lines("+I") {
		seen[strings.SplitN(strings.TrimPrefix(l, "+I["), ",", 2)[0]]++
	}
	for i := range 20 + publishedWhileDown {
		if seen[fmt.Sprint(i)] == 0 {
			t.Errorf("message %d lost", i)
		}
	}
	if n < 1 {
		t.Errorf("%d reconnections counted", n)
	}
	if !strings.Contains(e.Log.String(), "lost queue 'q' on amqp://") || !strings.Contains(e.Log.String(), "@"+b.Addr+"/") {
		t.Errorf("log:\n%s", e.Log)
	}
}

// TestSourceMalformed applies each bad-record policy to a payload that
// is not JSON; a skipped message is acknowledged like any other.
func TestSourceMalformed(t *testing.T) {
	const ddl = `
CREATE TABLE m (n INT) WITH ('connector' = 'rabbitmq', 'uri' = '$URI', 'queue' = 'bad', 'format' = 'json' $OPTS);
CREATE TABLE out (n INT) WITH ('connector' = 'print');
INSERT INTO out SELECT * FROM m;`
	publish := func(b *amqptest.Broker) {
		b.WaitConsumers("bad", 1, 5*time.Second)
		b.Publish("", "bad", []byte(`{"n":1}`), amqptest.Properties{})
		b.Publish("", "bad", []byte(`not json`), amqptest.Properties{MessageID: "x-2"})
		b.Publish("", "bad", []byte(`{"n":3}`), amqptest.Properties{})
	}
	t.Run("fail", func(t *testing.T) {
		b := amqptest.Start(t)
		b.DeclareQueue("bad", false)
		e := enginetest.Open(t)
		j := e.Start(t, ddl, "$URI", b.URL, "$OPTS", "")
		publish(b)
		err := enginetest.WaitErr(t, j)
		if err == nil || !strings.Contains(err.Error(), "source m: queue 'bad' delivery-tag 2 message-id 'x-2'") || !strings.Contains(err.Error(), "cannot decode record") {
			t.Errorf("got %v", err)
		}
	})
	t.Run("skip", func(t *testing.T) {
		b := amqptest.Start(t)
		b.DeclareQueue("bad", false)
		e := enginetest.Open(t)
		j := e.Start(t, ddl, "$URI", b.URL, "$OPTS", ", 'json.ignore-parse-errors' = 'true'")
		publish(b)
		e.Out.WaitLines(t, "+I", 2)
		waitQueue(t, b, "bad", amqptest.QueueStats{Consumers: 1})
		enginetest.Stop(t, j)
		if got := strings.Join(e.Out.Lines("+I"), " "); got != "+I[1] +I[3]" {
			t.Errorf("got %s", got)
		}
	})
	t.Run("dead-letter", func(t *testing.T) {
		b := amqptest.Start(t)
		b.DeclareQueue("bad", false)
		e := enginetest.Open(t)
		dl := filepath.Join(t.TempDir(), "dead.txt")
		j := e.Start(t, ddl, "$URI", b.URL, "$OPTS", ", 'dead-letter.path' = '"+dl+"'")
		publish(b)
		e.Out.WaitLines(t, "+I", 2)
		enginetest.Stop(t, j)
		if got := strings.Join(e.Out.Lines("+I"), " "); got != "+I[1] +I[3]" {
			t.Errorf("got %s", got)
		}
		if data, _ := os.ReadFile(dl); string(data) != "not json\n" {
			t.Errorf("dead letters: %q", data)
		}
	})
}

// TestFailures: a broker that is down, refused credentials, a missing
// queue and a missing exchange each fail the job with an error that names
// the broker by its URI without the password.
func TestFailures(t *testing.T) {
	b := amqptest.Start(t, amqptest.WithUser("edge", "s3cret"))
	b.DeclareQueue("q", false)
	where := "amqp://edge@" + b.Addr + "/"
	cases := []struct {
		name, ddl, want string
	}{
		{"auth refused", `
CREATE TABLE m (n INT) WITH ('connector' = 'rabbitmq', 'uri' = 'amqp://edge:wrong@$ADDR/', 'queue' = 'q', 'format' = 'json');
CREATE TABLE out (n INT) WITH ('connector' = 'print');
INSERT INTO out SELECT * FROM m;`,
			"rabbitmq table 'm': " + where + ": ACCESS_REFUSED - Login was refused using authentication mechanism PLAIN. For details see the broker logfile. (AMQP 403): the broker refused the user name or password"},
		{"auth refused, sink", `
CREATE TABLE g (n INT) WITH ('connector' = 'datagen', 'number-of-rows' = '3');
CREATE TABLE s (n INT) WITH ('connector' = 'rabbitmq', 'uri' = 'amqp://$ADDR/', 'username' = 'edge', 'password' = 'wrong', 'queue' = 'q', 'format' = 'json');
INSERT INTO s SELECT * FROM g;`,
			"rabbitmq table 's': " + where + ": ACCESS_REFUSED"},
		{"missing queue", `
CREATE TABLE m (n INT) WITH ('connector' = 'rabbitmq', 'uri' = '$URI', 'queue' = 'nope', 'format' = 'json');
CREATE TABLE out (n INT) WITH ('connector' = 'print');
INSERT INTO out SELECT * FROM m;`,
			"rabbitmq table 'm': " + where + ": queue 'nope' is not there (declare it, or set 'queue.declare' = 'true')"},
		{"missing exchange", `
CREATE TABLE g (n INT) WITH ('connector' = 'datagen', 'number-of-rows' = '3');
CREATE TABLE s (n INT) WITH ('connector' = 'rabbitmq', 'uri' = '$URI', 'exchange' = 'nope', 'routing-key' = 'k', 'format' = 'json');
INSERT INTO s SELECT * FROM g;`,
			"rabbitmq table 's': " + where + ": exchange 'nope' is not there (declare it, or set 'exchange.declare' = 'true')"},
		{"vhost", `
CREATE TABLE m (n INT) WITH ('connector' = 'rabbitmq', 'uri' = 'amqp://edge:s3cret@$ADDR/prod', 'queue' = 'q', 'format' = 'json');
CREATE TABLE out (n INT) WITH ('connector' = 'print');
INSERT INTO out SELECT * FROM m;`,
			"rabbitmq table 'm': amqp://edge@" + b.Addr + "/prod: NOT_ALLOWED - vhost prod not found (AMQP 530): virtual host 'prod' is not there"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := enginetest.Open(t)
			j := e.Start(t, tc.ddl, "$URI", b.URL, "$ADDR", b.Addr)
			err := enginetest.WaitErr(t, j)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got  %v\nwant %s", err, tc.want)
			}
			if err != nil && (strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "wrong")) {
				t.Errorf("a password shows in %v", err)
			}
		})
	}
	t.Run("down", func(t *testing.T) {
		down := amqptest.Start(t, amqptest.WithUser("edge", "s3cret"))
		down.Stop()
		e := enginetest.Open(t)
		j := e.Start(t, `
CREATE TABLE m (n INT) WITH ('connector' = 'rabbitmq', 'uri' = '$URI', 'queue' = 'q', 'format' = 'json', 'connect.timeout' = '300 ms');
CREATE TABLE out (n INT) WITH ('connector' = 'print');
INSERT INTO out SELECT * FROM m;`, "$URI", down.URL)
		err := enginetest.WaitErr(t, j)
		want := "rabbitmq table 'm': cannot connect to amqp://edge@" + down.Addr + "/ within 300ms ('connect.timeout')"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v\nwant %s", err, want)
		}
	})
}

// TestDeclare: the source declares its queue and binds it to an exchange
// it declares; the sink publishes through that exchange by a routing key
// from a column.
func TestDeclare(t *testing.T) {
	b := amqptest.Start(t)
	e := enginetest.Open(t)
	j := e.Start(t, `
CREATE TABLE alerts (device STRING, temp DOUBLE, rk STRING METADATA FROM 'routing-key' VIRTUAL)
  WITH ('connector' = 'rabbitmq', 'uri' = '$URI', 'queue' = 'alerts', 'queue.declare' = 'true',
  'queue.arguments' = 'x-max-length=1000', 'exchange' = 'plant', 'exchange.declare' = 'true', 'exchange.type' = 'topic',
  'routing-key' = 'alert.#', 'format' = 'json');
CREATE TABLE out (device STRING, temp DOUBLE, rk STRING) WITH ('connector' = 'print');
INSERT INTO out SELECT * FROM alerts;`, "$URI", b.URL)
	b.WaitConsumers("alerts", 1, 5*time.Second)
	e2 := enginetest.Open(t)
	j2 := e2.Start(t, `
CREATE TABLE plant (device STRING, temp DOUBLE, rk STRING) WITH ('connector' = 'rabbitmq', 'uri' = '$URI', 'exchange' = 'plant',
  'exchange.type' = 'topic', 'sink.routing-key-column' = 'rk', 'format' = 'json');
INSERT INTO plant VALUES ('d1', 35.0, 'alert.hot.d1'), ('d2', 10.0, 'reading.d2'), ('d3', -5.0, 'alert.cold.d3');`, "$URI", b.URL)
	// The reading to 'reading.d2' has no queue: with 'sink.mandatory' (the
	// default) the broker returns it, and that fails the job.
	if err := enginetest.WaitErr(t, j2); err == nil || !strings.Contains(err.Error(), "returned a message to exchange 'plant' with routing key 'reading.d2': NO_ROUTE (312)") {
		t.Fatalf("got %v", err)
	}
	got := e.Out.WaitLines(t, "+I", 1)
	enginetest.Stop(t, j)
	if len(got) == 0 || got[0] != "+I[d1, 35.0, alert.hot.d1]" {
		t.Errorf("got %v", got)
	}
	// Whether the failed job sent 'alert.cold.d3' before it failed, and
	// whether the reader took it before it stopped, depends on timing:
	// what the queue still holds is not the next job's.
	b.Drain("alerts")
	// Without mandatory, the unroutable message is dropped by the broker.
	e3 := enginetest.Open(t)
	j3 := e3.Start(t, `
CREATE TABLE plant (device STRING, temp DOUBLE, rk STRING) WITH ('connector' = 'rabbitmq', 'uri' = '$URI', 'exchange' = 'plant',
  'sink.routing-key-column' = 'rk', 'sink.mandatory' = 'false', 'format' = 'json');
INSERT INTO plant VALUES ('d4', 50.0, 'alert.hot.d4'), ('d5', 10.0, 'reading.d5');`, "$URI", b.URL)
	select {
	case <-j3.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("the job did not end")
	}
	if err := j3.Wait(); err != nil {
		t.Fatal(err)
	}
	msgs := b.Drain("alerts")
	var bodies []string
	for _, m := range msgs {
		bodies = append(bodies, m.RoutingKey+" "+string(m.Body)+" "+m.Props.ContentType+fmt.Sprint(m.Props.DeliveryMode))
	}
	sort.Strings(bodies)
	want := `alert.hot.d4 {"device":"d4","temp":50.0,"rk":"alert.hot.d4"} application/json2`
	if strings.Join(bodies, "\n") != want {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(bodies, "\n"), want)
	}
}

// TestFilterRules runs RabbitMQ → filter → RabbitMQ: a statement set of
// rules over one queue, each publishing its alerts to a queue of its own.
func TestFilterRules(t *testing.T) {
	b := amqptest.Start(t)
	for _, q := range []string{"readings", "hot", "cold"} {
		b.DeclareQueue(q, true)
	}
	e := enginetest.Open(t)
	j := e.Start(t, `
SET 'execution.checkpointing.interval' = '50ms';
CREATE TABLE readings (device STRING, temp DOUBLE) WITH ('connector' = 'rabbitmq', 'uri' = '$URI', 'queue' = 'readings', 'format' = 'json');
CREATE TABLE hot (device STRING, temp DOUBLE) WITH ('connector' = 'rabbitmq', 'uri' = '$URI', 'queue' = 'hot', 'format' = 'json');
CREATE TABLE cold (device STRING, temp DOUBLE) WITH ('connector' = 'rabbitmq', 'uri' = '$URI', 'queue' = 'cold', 'format' = 'csv');
EXECUTE STATEMENT SET BEGIN
INSERT INTO hot SELECT * FROM readings WHERE temp > 30;
INSERT INTO cold SELECT * FROM readings WHERE temp < 0;
END;`, "$URI", b.URL)
	b.WaitConsumers("readings", 1, 5*time.Second)
	for i, temp := range []float64{35, 10, -5, 40, -1} {
		b.Publish("", "readings", fmt.Appendf(nil, `{"device":"d%d","temp":%g}`, i, temp), amqptest.Properties{})
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		h, _ := b.Queue("hot")
		c, _ := b.Queue("cold")
		if h.Ready+c.Ready >= 4 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	enginetest.Stop(t, j)
	var got []string
	for _, q := range []string{"hot", "cold"} {
		for _, m := range b.Drain(q) {
			got = append(got, q+" "+strings.TrimSpace(string(m.Body))+" "+m.Props.ContentType)
		}
	}
	want := []string{
		`hot {"device":"d0","temp":35.0} application/json`,
		`hot {"device":"d3","temp":40.0} application/json`,
		`cold d2,-5.0 text/csv`,
		`cold d4,-1.0 text/csv`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestURIParameters: the query parameters of the URI are honoured as
// RabbitMQ defines them: heartbeat (seconds), channel_max and frame_max
// (bytes) go into connection.tune-ok, auth_mechanism picks the SASL
// mechanism (the first the broker offers, in the URI's order). A
// message larger than frame_max crosses both ways in frames the broker
// checks against it. Without parameters, the defaults are as before.
func TestURIParameters(t *testing.T) {
	big := strings.Repeat("x", 20000)
	run := func(t *testing.T, b *amqptest.Broker, query string) []amqptest.Client {
		t.Helper()
		b.DeclareQueue("in", true)
		b.DeclareQueue("out", true)
		e := enginetest.Open(t)
		j := e.Start(t, `
CREATE TABLE src (s STRING) WITH ('connector' = 'rabbitmq', 'uri' = '$URI', 'queue' = 'in', 'format' = 'json');
CREATE TABLE snk (s STRING) WITH ('connector' = 'rabbitmq', 'uri' = '$URI', 'queue' = 'out', 'format' = 'json');
INSERT INTO snk SELECT s FROM src;`, "$URI", b.URL+query)
		if !b.WaitConsumers("in", 1, 10*time.Second) {
			t.Fatal("no consumer of 'in'")
		}
		if n, err := b.Publish("", "in", []byte(`{"s":"`+big+`"}`), amqptest.Properties{}); err != nil || n != 1 {
			t.Fatalf("publish: %d queues, %v", n, err)
		}
		waitQueue(t, b, "out", amqptest.QueueStats{Ready: 1})
		clients := b.Clients()
		enginetest.Stop(t, j)
		if m := b.Drain("out"); len(m) != 1 || string(m[0].Body) != `{"s":"`+big+`"}` {
			t.Errorf("the sink wrote %d messages, not the one read", len(m))
		}
		sort.Slice(clients, func(i, j int) bool { return clients[i].Name < clients[j].Name })
		if len(clients) != 2 || !strings.HasPrefix(clients[0].Name, "sluice sink ") || !strings.HasPrefix(clients[1].Name, "sluice source ") {
			t.Fatalf("clients %+v, want the sink's and the source's", clients)
		}
		return clients
	}
	check := func(t *testing.T, got []amqptest.Client, want amqptest.Client) {
		t.Helper()
		for _, c := range got {
			want.Name = c.Name
			if c != want {
				t.Errorf("got %+v\nwant %+v", c, want)
			}
		}
	}
	t.Run("honoured", func(t *testing.T) {
		b := amqptest.Start(t)
		got := run(t, b, "?heartbeat=3&channel_max=5&frame_max=8192&auth_mechanism=amqplain&connection_timeout=2000")
		check(t, got, amqptest.Client{Mechanism: "AMQPLAIN", User: "guest", ChannelMax: 5, FrameMax: 8192, Heartbeat: 3 * time.Second})
	})
	t.Run("defaults", func(t *testing.T) {
		b := amqptest.Start(t)
		got := run(t, b, "")
		check(t, got, amqptest.Client{Mechanism: "PLAIN", User: "guest", ChannelMax: 2047, FrameMax: 131072, Heartbeat: 10 * time.Second})
	})
	t.Run("the broker's", func(t *testing.T) {
		// 0 for each: what the broker proposes (2047 channels, 128 KiB
		// frames, heartbeats every 60 s).
		b := amqptest.Start(t)
		got := run(t, b, "?heartbeat=0&channel_max=0&frame_max=0")
		check(t, got, amqptest.Client{Mechanism: "PLAIN", User: "guest", ChannelMax: 2047, FrameMax: 131072, Heartbeat: 60 * time.Second})
	})
	t.Run("mechanisms in order", func(t *testing.T) {
		b := amqptest.Start(t, amqptest.WithMechanisms("PLAIN"))
		got := run(t, b, "?auth_mechanism=amqplain&auth_mechanism=plain")
		check(t, got, amqptest.Client{Mechanism: "PLAIN", User: "guest", ChannelMax: 2047, FrameMax: 131072, Heartbeat: 10 * time.Second})
	})
	t.Run("no mechanism in common", func(t *testing.T) {
		b := amqptest.Start(t, amqptest.WithMechanisms("PLAIN"))
		b.DeclareQueue("in", true)
		e := enginetest.Open(t)
		j := e.Start(t, `
CREATE TABLE src (s STRING) WITH ('connector' = 'rabbitmq', 'uri' = '$URI', 'queue' = 'in', 'format' = 'json', 'connect.timeout' = '1 min');
CREATE TABLE out (s STRING) WITH ('connector' = 'print');
INSERT INTO out SELECT * FROM src;`, "$URI", b.URL+"?auth_mechanism=amqplain")
		err := enginetest.WaitErr(t, j)
		want := "@" + b.Addr + "/: SASL could not negotiate a shared mechanism (AMQP 403): the broker offers none of the SASL mechanisms asked for: AMQPLAIN (the URI's auth_mechanism)"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got  %v\nwant %s", err, want)
		}
	})
}
