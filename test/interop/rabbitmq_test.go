package interop_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// amqpURI returns the broker of SLUICE_AMQP_URI (amqp://guest:guest@
// 127.0.0.1:5672/, the machine's RabbitMQ), or skips.
func amqpURI(t *testing.T) string {
	uri := os.Getenv("SLUICE_AMQP_URI")
	if uri == "" {
		t.Skip("set SLUICE_AMQP_URI (e.g. amqp://guest:guest@127.0.0.1:5672/) to test the rabbitmq connector against RabbitMQ")
	}
	return uri
}

// amqpClient is a plain client of the broker for the test's own
// publishing, reading and declarations.
type amqpClient struct {
	conn *amqp.Connection
	ch   *amqp.Channel
}

func dialAMQP(t *testing.T, uri string) *amqpClient {
	t.Helper()
	conn, err := amqp.Dial(uri)
	if err != nil {
		t.Fatalf("cannot connect to RabbitMQ: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	return &amqpClient{conn, ch}
}

// queue declares a durable queue with a name of its own for this run,
// deleted when the test ends.
func (c *amqpClient) queue(t *testing.T, base string, args amqp.Table) string {
	t.Helper()
	name := fmt.Sprintf("sluice-test-%s-%d", base, time.Now().UnixNano())
	if _, err := c.ch.QueueDeclare(name, true, false, false, false, args); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if conn, err := amqp.Dial(os.Getenv("SLUICE_AMQP_URI")); err == nil {
			if ch, err := conn.Channel(); err == nil {
				ch.QueueDelete(name, false, false, false)
			}
			conn.Close()
		}
	})
	return name
}

func (c *amqpClient) publish(t *testing.T, queue string, body string, p amqp.Publishing) {
	t.Helper()
	p.Body = []byte(body)
	dc, err := c.ch.PublishWithDeferredConfirmWithContext(context.Background(), "", queue, true, false, p)
	if err != nil {
		t.Fatal(err)
	}
	if !dc.Wait() {
		t.Fatalf("RabbitMQ refused a message to %s", queue)
	}
}

// counts returns a queue's ready messages and consumers.
func (c *amqpClient) counts(t *testing.T, queue string) (int, int) {
	t.Helper()
	q, err := c.ch.QueueDeclarePassive(queue, true, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	return q.Messages, q.Consumers
}

// waitCounts waits up to 20 s for a queue's counts.
func (c *amqpClient) waitCounts(t *testing.T, queue string, ready, consumers int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r, n := c.counts(t, queue)
		if r == ready && n == consumers {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue %s: %d ready, %d consumers; want %d, %d", queue, r, n, ready, consumers)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// get takes every message of a queue.
func (c *amqpClient) drain(t *testing.T, queue string) []amqp.Delivery {
	t.Helper()
	var out []amqp.Delivery
	for {
		d, ok, err := c.ch.Get(queue, true)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return out
		}
		out = append(out, d)
	}
}

// TestRabbitMQFilter runs RabbitMQ → filter → RabbitMQ against the real
// broker: every message that passes the filter arrives, persistent, with
// its content type; the input is acknowledged by the checkpoints and the
// final commit, so nothing stays in the queue.
func TestRabbitMQFilter(t *testing.T) {
	uri := amqpURI(t)
	c := dialAMQP(t, uri)
	in, out := c.queue(t, "in", nil), c.queue(t, "out", nil)
	e := openEngine(t)
	j := e.start(t, `
SET 'execution.checkpointing.interval' = '100ms';
CREATE TABLE readings (device STRING, temp DOUBLE, rk STRING METADATA FROM 'routing-key' VIRTUAL,
  mid STRING METADATA FROM 'message-id' VIRTUAL, h MAP<STRING, STRING> METADATA FROM 'headers' VIRTUAL)
  WITH ('connector' = 'rabbitmq', 'uri' = '$URI', 'queue' = '$IN', 'format' = 'json', 'prefetch-count' = '100');
CREATE TABLE hot (device STRING, temp DOUBLE, mid STRING, site STRING) WITH ('connector' = 'rabbitmq', 'uri' = '$URI', 'queue' = '$OUT', 'format' = 'json');
INSERT INTO hot SELECT device, temp, mid, h['site'] FROM readings WHERE temp > 30 AND rk = '$IN';`, "$URI", uri, "$IN", in, "$OUT", out)
	c.waitCounts(t, in, 0, 1)
	const n = 1000
	for i := range n {
		c.publish(t, in, fmt.Sprintf(`{"device":"d%d","temp":%d}`, i, i%60), amqp.Publishing{MessageId: fmt.Sprint("m", i),
			Headers: amqp.Table{"site": "north"}})
	}
	want := 0
	for i := range n {
		if i%60 > 30 {
			want++
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if r, _ := c.counts(t, out); r >= want {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	finish(t, j, true)
	c.waitCounts(t, in, 0, 0)
	got := c.drain(t, out)
	if len(got) != want {
		t.Fatalf("got %d messages, want %d", len(got), want)
	}
	for k, d := range got {
		var dev, mid, site string
		var temp float64
		if _, err := fmt.Sscanf(strings.NewReplacer(`"`, " ", ",", " ", "{", "", "}", "", ":", " ").Replace(string(d.Body)),
			" device   %s    temp  %g  mid   %s    site   %s", &dev, &temp, &mid, &site); err != nil || site != "north" || mid != "m"+dev[1:] || temp <= 30 {
			t.Fatalf("message %d: %s (%v)", k, d.Body, err)
		}
		if d.ContentType != "application/json" || d.DeliveryMode != amqp.Persistent {
			t.Fatalf("message %d: content type %q, delivery mode %d", k, d.ContentType, d.DeliveryMode)
		}
	}
}

// TestRabbitMQRedelivery: a job cancelled before any checkpoint (a
// crash) acknowledged nothing: the next run gets it all again, marked
// redelivered, and stopped normally acknowledges it.
func TestRabbitMQRedelivery(t *testing.T) {
	uri := amqpURI(t)
	c := dialAMQP(t, uri)
	in := c.queue(t, "redeliver", nil)
	job := `
SET 'state.dir' = '$DIR';
SET 'pipeline.name' = 'redeliver';
SET 'execution.checkpointing.interval' = '$CP';
CREATE TABLE m (n INT, re BOOLEAN METADATA FROM 'redelivered' VIRTUAL) WITH ('connector' = 'rabbitmq', 'uri' = '$URI', 'queue' = '$IN', 'format' = 'json');
CREATE TABLE out (n INT, re BOOLEAN) WITH ('connector' = 'print');
INSERT INTO out SELECT * FROM m;`
	dir := t.TempDir()
	e := openEngine(t)
	j := e.start(t, job, "$URI", uri, "$IN", in, "$DIR", dir, "$CP", "1h")
	for i := range 10 {
		c.publish(t, in, fmt.Sprintf(`{"n":%d}`, i), amqp.Publishing{DeliveryMode: amqp.Persistent})
	}
	if got := e.out.waitRows(10, 20*time.Second); len(got) != 10 {
		t.Fatalf("got %v", got)
	}
	if r, _ := c.counts(t, in); r != 0 {
		t.Fatalf("%d messages ready while the job holds them", r)
	}
	j.Cancel()
	<-j.Done()
	e.Close()
	c.waitCounts(t, in, 10, 0)
	e2 := openEngine(t)
	j2 := e2.start(t, job, "$URI", uri, "$IN", in, "$DIR", dir, "$CP", "100ms")
	got := e2.out.waitRows(10, 20*time.Second)
	finish(t, j2, true)
	c.waitCounts(t, in, 0, 0)
	if len(got) != 10 {
		t.Fatalf("got %v", got)
	}
	for i, r := range got {
		if r != fmt.Sprintf("+I[%d, TRUE]", i) {
			t.Fatalf("row %d: %s", i, r)
		}
	}
}

// TestRabbitMQFailures: refused credentials, a missing queue, a nack from
// a full queue that rejects publishes, and a message no queue takes.
func TestRabbitMQFailures(t *testing.T) {
	uri := amqpURI(t)
	c := dialAMQP(t, uri)
	small := c.queue(t, "small", amqp.Table{"x-max-length": int32(2), "x-overflow": "reject-publish"})
	bad := strings.Replace(uri, "guest:guest@", "guest:wrong@", 1)
	cases := []struct{ name, sql, want string }{
		{"auth", `
CREATE TABLE m (n INT) WITH ('connector' = 'rabbitmq', 'uri' = '$BAD', 'queue' = 'x', 'format' = 'json');
CREATE TABLE out (n INT) WITH ('connector' = 'print');
INSERT INTO out SELECT * FROM m;`, "(AMQP 403): the broker refused the user name or password"},
		{"missing queue", `
CREATE TABLE m (n INT) WITH ('connector' = 'rabbitmq', 'uri' = '$URI', 'queue' = 'sluice-test-does-not-exist', 'format' = 'json');
CREATE TABLE out (n INT) WITH ('connector' = 'print');
INSERT INTO out SELECT * FROM m;`, "queue 'sluice-test-does-not-exist' is not there (declare it, or set 'queue.declare' = 'true')"},
		{"nack", `
CREATE TABLE g (n INT) WITH ('connector' = 'datagen', 'number-of-rows' = '5');
CREATE TABLE s (n INT) WITH ('connector' = 'rabbitmq', 'uri' = '$URI', 'queue' = '$SMALL', 'format' = 'json');
INSERT INTO s SELECT * FROM g;`, "refused a message to exchange '' with routing key '" + small + "' (basic.nack"},
		{"unroutable", `
CREATE TABLE g (n INT) WITH ('connector' = 'datagen', 'number-of-rows' = '5');
CREATE TABLE s (n INT) WITH ('connector' = 'rabbitmq', 'uri' = '$URI', 'exchange' = 'amq.direct', 'routing-key' = 'sluice-test-nobody', 'format' = 'json');
INSERT INTO s SELECT * FROM g;`, "returned a message to exchange 'amq.direct' with routing key 'sluice-test-nobody': NO_ROUTE (312)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := openEngine(t)
			j := e.start(t, tc.sql, "$URI", uri, "$BAD", bad, "$SMALL", small)
			select {
			case <-j.Done():
			case <-time.After(60 * time.Second):
				j.Cancel()
				t.Fatal("the job did not end")
			}
			err := j.Wait()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v\nwant %s", err, tc.want)
			}
			if strings.Contains(err.Error(), "wrong") {
				t.Errorf("the password shows: %v", err)
			}
		})
	}
}

// TestRabbitMQReconnect closes the job's connections from the broker's
// side (rabbitmqctl close_connection, as an operator or a failover does)
// while messages flow: both the source and the sink connect again, and
// every message arrives (at least once).
func TestRabbitMQReconnect(t *testing.T) {
	uri := amqpURI(t)
	if _, err := exec.LookPath("rabbitmqctl"); err != nil {
		t.Skip("no rabbitmqctl to close connections with")
	}
	c := dialAMQP(t, uri)
	in, out := c.queue(t, "rin", nil), c.queue(t, "rout", nil)
	name := fmt.Sprintf("reconnect%d", time.Now().UnixNano())
	e := openEngine(t)
	j := e.start(t, `
SET 'pipeline.name' = '$NAME';
SET 'execution.checkpointing.interval' = '100ms';
CREATE TABLE m (n INT) WITH ('connector' = 'rabbitmq', 'uri' = '$URI', 'queue' = '$IN', 'format' = 'json',
  'reconnect.initial-backoff' = '20 ms', 'reconnect.max-backoff' = '200 ms');
CREATE TABLE s (n INT) WITH ('connector' = 'rabbitmq', 'uri' = '$URI', 'queue' = '$OUT', 'format' = 'json',
  'reconnect.initial-backoff' = '20 ms', 'reconnect.max-backoff' = '200 ms');
INSERT INTO s SELECT * FROM m;`, "$URI", uri, "$IN", in, "$OUT", out, "$NAME", name)
	c.waitCounts(t, in, 0, 1)
	// Each connection is closed at a third and at two thirds of the
	// input: at least once (at two thirds it may not be listed yet).
	srcClosed, sinkClosed := 0, 0
	defer func() {
		if srcClosed == 0 || sinkClosed == 0 {
			t.Errorf("closed the source's connection %d times and the sink's %d: no reconnection tested", srcClosed, sinkClosed)
		}
	}()
	const n = 600
	for i := range n {
		c.publish(t, in, fmt.Sprintf(`{"n":%d}`, i), amqp.Publishing{DeliveryMode: amqp.Persistent})
		if i == n/3 || i == 2*n/3 {
			srcClosed += closeConnections(t, "sluice source "+name+"/")
			sinkClosed += closeConnections(t, "sluice sink "+name+"/")
		}
	}
	seen := map[string]bool{}
	deadline := time.Now().Add(60 * time.Second)
	for len(seen) < n && time.Now().Before(deadline) {
		for _, d := range c.drain(t, out) {
			seen[string(d.Body)] = true
		}
		time.Sleep(50 * time.Millisecond)
	}
	health := j.Health()
	finish(t, j, true)
	for i := range n {
		if !seen[fmt.Sprintf(`{"n":%d}`, i)] {
			t.Fatalf("message %d lost (%d of %d arrived)", i, len(seen), n)
		}
	}
	if health.Reconnects < 2 {
		t.Errorf("%d reconnections counted", health.Reconnects)
	}
}

// closeConnections closes, from the broker, the connections whose name
// starts with prefix.
func closeConnections(t *testing.T, prefix string) int {
	t.Helper()
	// The connection may be coming back from the last close: wait a
	// moment for it rather than find none.
	deadline := time.Now().Add(5 * time.Second)
	for {
		out, err := exec.Command("rabbitmqctl", "-q", "list_connections", "--no-table-headers", "pid", "client_properties").CombinedOutput()
		if err != nil {
			t.Fatalf("rabbitmqctl list_connections: %v\n%s", err, out)
		}
		closed := 0
		for _, line := range strings.Split(string(out), "\n") {
			pid, props, ok := strings.Cut(line, "\t")
			if !ok || !strings.Contains(props, `{"connection_name","`+prefix) {
				continue
			}
			if out, err := exec.Command("rabbitmqctl", "-q", "close_connection", pid, "sluice interop test").CombinedOutput(); err != nil {
				t.Fatalf("rabbitmqctl close_connection: %v\n%s", err, out)
			}
			closed++
		}
		if closed > 0 || time.Now().After(deadline) {
			if closed == 0 {
				t.Logf("no connection named %s... listed to close", prefix)
			}
			return closed
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestRabbitMQURIParameters: the URI's query parameters reach RabbitMQ
// as its documentation defines them: rabbitmqctl lists the job's
// connections with the SASL mechanism, channel_max, frame_max and
// heartbeat timeout they asked for; a message larger than frame_max goes
// through both ways.
func TestRabbitMQURIParameters(t *testing.T) {
	uri := amqpURI(t)
	if _, err := exec.LookPath("rabbitmqctl"); err != nil {
		t.Skip("no rabbitmqctl to list connections with")
	}
	c := dialAMQP(t, uri)
	in, out := c.queue(t, "pin", nil), c.queue(t, "pout", nil)
	name := fmt.Sprintf("uriparams%d", time.Now().UnixNano())
	e := openEngine(t)
	j := e.start(t, `
SET 'pipeline.name' = '$NAME';
CREATE TABLE m (s STRING) WITH ('connector' = 'rabbitmq', 'uri' = '$URI', 'queue' = '$IN', 'format' = 'json');
CREATE TABLE s (s STRING) WITH ('connector' = 'rabbitmq', 'uri' = '$URI', 'queue' = '$OUT', 'format' = 'json');
INSERT INTO s SELECT * FROM m;`, "$URI", uri+"?heartbeat=7&channel_max=9&frame_max=16384&auth_mechanism=amqplain&connection_timeout=5000",
		"$IN", in, "$OUT", out, "$NAME", name)
	c.waitCounts(t, in, 0, 1)
	big := `{"s":"` + strings.Repeat("y", 40000) + `"}`
	c.publish(t, in, big, amqp.Publishing{})
	c.waitCounts(t, out, 1, 0)
	lines, err := exec.Command("rabbitmqctl", "-q", "list_connections", "--no-table-headers",
		"auth_mechanism", "channel_max", "frame_max", "timeout", "client_properties").CombinedOutput()
	if err != nil {
		t.Fatalf("rabbitmqctl list_connections: %v\n%s", err, lines)
	}
	finish(t, j, true)
	if got := c.drain(t, out); len(got) != 1 || string(got[0].Body) != big {
		t.Errorf("the sink wrote %d messages, not the one read", len(got))
	}
	found := 0
	for _, line := range strings.Split(string(lines), "\n") {
		if !strings.Contains(line, `{"connection_name","sluice source `+name+"/") && !strings.Contains(line, `{"connection_name","sluice sink `+name+"/") {
			continue
		}
		found++
		if f := strings.Split(line, "\t"); len(f) < 4 || strings.Join(f[:4], " ") != "AMQPLAIN 9 16384 7" {
			t.Errorf("connection listed as %q, want AMQPLAIN, channel_max 9, frame_max 16384, timeout 7", line)
		}
	}
	if found != 2 {
		t.Errorf("%d of the job's connections listed, want the source's and the sink's:\n%s", found, lines)
	}
}
