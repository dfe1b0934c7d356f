package rabbitmq

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/connector/format/json"
	"github.com/sluicesql/sluice/internal/amqptest"
	"github.com/sluicesql/sluice/internal/logtest"
	"github.com/sluicesql/sluice/types"
)

var intSchema = types.Schema{Columns: []types.Column{{Name: "n", Type: types.Type{Kind: types.KindInt}}}}

func testEnv(log *logtest.Lines, reconnects *countReconnects) connector.Env {
	f := format.NewRegistry()
	f.Register(json.New())
	env := connector.Env{Formats: f, Job: "j"}
	if log != nil {
		env.Logf = log.Logf
	}
	if reconnects != nil {
		env.Reconnects = &reconnects.n
	}
	return env
}

type countReconnects struct{ n atomic.Int64 }

func options(kv ...string) connector.Options {
	o := connector.Options{"connector": "rabbitmq", "format": "json",
		"reconnect.initial-backoff": "10 ms", "reconnect.max-backoff": "50 ms"}
	for i := 0; i+1 < len(kv); i += 2 {
		o[kv[i]] = kv[i+1]
	}
	return o
}

// readN reads until it has n rows (or 10 s pass).
func readN(t *testing.T, r connector.Reader, n int) []string {
	t.Helper()
	var got []string
	deadline := time.Now().Add(10 * time.Second)
	for len(got) < n && time.Now().Before(deadline) {
		b := &types.Batch{}
		if err := r.Read(context.Background(), b, n-len(got)); err != nil {
			t.Fatal(err)
		}
		for _, row := range b.Rows {
			got = append(got, fmt.Sprint(row.Vals[0].Int()))
		}
	}
	if len(got) != n {
		t.Fatalf("read %d rows, want %d: %v", len(got), n, got)
	}
	return got
}

func waitStats(t *testing.T, b *amqptest.Broker, q string, want amqptest.QueueStats) {
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

// TestStaleTagsAfterReconnect: deliveries read on a channel that then
// closed are never acknowledged on the next one, where their tags would
// name other messages (or none, which closes the channel); the broker
// delivers them again, and deliveries of the dead channel that the job
// had not read yet are dropped rather than read twice.
func TestStaleTagsAfterReconnect(t *testing.T) {
	b := amqptest.Start(t)
	b.DeclareQueue("q", true)
	log := &logtest.Lines{}
	rc := &countReconnects{}
	src, err := Factory{}.CreateSource(connector.Table{Name: "m", Schema: intSchema, Options: options("uri", b.URL, "queue", "q")}, testEnv(log, rc))
	if err != nil {
		t.Fatal(err)
	}
	r, err := src.Open(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	a := r.(connector.Acknowledger)
	a.DeferAcks()
	for i := range 10 {
		b.Publish("", "q", fmt.Appendf(nil, `{"n":%d}`, i), amqptest.Properties{DeliveryMode: 2})
	}
	waitStats(t, b, "q", amqptest.QueueStats{Unacked: 10, Consumers: 1}) // all ten delivered
	first := readN(t, r, 4)                                              // six wait unread
	a.Barrier(1)                                                         // the four belong to checkpoint 1

	b.KillConnections()
	waitStats(t, b, "q", amqptest.QueueStats{Unacked: 10, Consumers: 1}) // delivered again on a new channel
	if rc.n.Load() != 1 {
		t.Fatalf("%d reconnections counted", rc.n.Load())
	}
	// The ten again, once each: the six unread ones of the dead channel
	// are dropped, not read as well.
	again := readN(t, r, 10)
	if strings.Join(first, ",") != "0,1,2,3" || strings.Join(again, ",") != "0,1,2,3,4,5,6,7,8,9" {
		t.Fatalf("read %v, then %v", first, again)
	}
	// Checkpoint 1 completes: its four deliveries were of the dead
	// channel; nothing is acknowledged on the new one.
	if err := a.Acknowledge(1); err != nil {
		t.Fatal(err)
	}
	a.Barrier(2)
	time.Sleep(20 * time.Millisecond) // an acknowledgement would be there by now
	waitStats(t, b, "q", amqptest.QueueStats{Unacked: 10, Consumers: 1})
	if err := a.Acknowledge(2); err != nil {
		t.Fatal(err)
	}
	waitStats(t, b, "q", amqptest.QueueStats{Consumers: 1})
	// The channel is healthy: more is read, no channel error reconnected it.
	b.Publish("", "q", []byte(`{"n":10}`), amqptest.Properties{})
	readN(t, r, 1)
	if rc.n.Load() != 1 {
		t.Fatalf("%d reconnections counted\n%s", rc.n.Load(), log)
	}
}

// TestPrefetchFullLogged: with acknowledgements waiting for a
// checkpoint, a full prefetch window stops the broker, which the log says.
func TestPrefetchFullLogged(t *testing.T) {
	b := amqptest.Start(t)
	b.DeclareQueue("q", false)
	log := &logtest.Lines{}
	src, err := Factory{}.CreateSource(connector.Table{Name: "m", Schema: intSchema,
		Options: options("uri", b.URL, "queue", "q", "prefetch-count", "3")}, testEnv(log, nil))
	if err != nil {
		t.Fatal(err)
	}
	r, err := src.Open(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.(connector.Acknowledger).DeferAcks()
	for i := range 5 {
		b.Publish("", "q", fmt.Appendf(nil, `{"n":%d}`, i), amqptest.Properties{})
	}
	readN(t, r, 3)
	r.Read(context.Background(), &types.Batch{}, 10)
	waitStats(t, b, "q", amqptest.QueueStats{Ready: 2, Unacked: 3, Consumers: 1})
	if !strings.Contains(log.String(), "3 messages ('prefetch-count') wait for the next checkpoint") {
		t.Errorf("log:\n%s", log)
	}
	r.(connector.Acknowledger).Barrier(1)
	r.(connector.Acknowledger).Acknowledge(1)
	readN(t, r, 2)
}

// TestSinkReconnect: a sink whose connection is lost, and whose broker
// is stopped and started again, publishes everything, in order, with
// what was unconfirmed published again.
func TestSinkReconnect(t *testing.T) {
	b := amqptest.Start(t)
	b.DeclareQueue("out", true)
	log := &logtest.Lines{}
	rc := &countReconnects{}
	s, err := Factory{}.CreateSink(connector.Table{Name: "out", Schema: intSchema, Options: options("uri", b.URL, "queue", "out")}, testEnv(log, rc))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	write := func(from, to int) {
		t.Helper()
		bt := &types.Batch{}
		for i := from; i < to; i++ {
			bt.AddRow(types.Insert, types.Origin{}, 1)[0] = types.IntValue(types.KindInt, int64(i))
		}
		if err := s.Write(ctx, bt); err != nil {
			t.Fatal(err)
		}
	}
	write(0, 100)
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	write(100, 150) // perhaps unconfirmed when the connection goes
	b.KillConnections()
	write(150, 200)
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	b.Stop() // durable queue, persistent messages: they stay
	go func() {
		time.Sleep(100 * time.Millisecond)
		b.Restart()
	}()
	write(200, 300) // waits for the broker
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if n := rc.n.Load(); n < 2 {
		t.Errorf("%d reconnections counted\n%s", n, log)
	}
	// Every message, in order of first appearance; a message published
	// again may come twice.
	seen := map[int]bool{}
	var order []int
	for _, m := range b.Drain("out") {
		var n int
		fmt.Sscanf(string(m.Body), `{"n":%d}`, &n)
		if !seen[n] {
			seen[n] = true
			order = append(order, n)
		}
		if m.Props.DeliveryMode != 2 || m.Props.ContentType != "application/json" {
			t.Fatalf("message %d: %+v", n, m.Props)
		}
	}
	if len(order) != 300 {
		t.Fatalf("%d distinct messages, want 300\n%s", len(order), log)
	}
	for i, n := range order {
		if n != i {
			t.Fatalf("message %d is %d (out of order)", i, n)
		}
	}
}

// TestSinkNack: a message the broker refuses (a full reject-publish
// queue nacks it) fails the sink at the next flush.
func TestSinkNack(t *testing.T) {
	b := amqptest.Start(t)
	s, err := Factory{}.CreateSink(connector.Table{Name: "out", Schema: intSchema, Options: options("uri", b.URL, "queue", "small",
		"queue.declare", "true", "queue.arguments", "x-max-length=2;x-overflow=reject-publish")}, testEnv(nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	bt := &types.Batch{}
	for i := range 3 {
		bt.AddRow(types.Insert, types.Origin{}, 1)[0] = types.IntValue(types.KindInt, int64(i))
	}
	ctx := context.Background()
	err = s.Write(ctx, bt)
	if err == nil {
		err = s.Flush(ctx)
	}
	if err == nil || !strings.Contains(err.Error(), "rabbitmq table 'out': the broker amqp://") || !strings.Contains(err.Error(), "refused a message to exchange '' with routing key 'small' (basic.nack") {
		t.Fatalf("got %v", err)
	}
}

// TestOptions: mistakes in the options are refused with what to write.
func TestOptions(t *testing.T) {
	cases := []struct {
		sink bool
		kv   []string
		want string
	}{
		{false, []string{"queue", "q"}, "missing required option 'uri' (e.g. 'amqp://guest:guest@127.0.0.1:5672/')"},
		{false, []string{"uri", "amqp://u:pw@h/"}, "option 'queue' is required"},
		{false, []string{"uri", "http://u:pw@h/", "queue", "q"}, "option 'uri' must be an AMQP URI such as 'amqp://guest:guest@127.0.0.1:5672/' (the path is the virtual host), not 'http://u:xxxxx@h/'"},
		{false, []string{"uri", "amqps://h/?cacertfile=/ca.pem", "queue", "q"}, "option 'uri': the query parameter 'cacertfile' is not read; use the option 'tls.ca-file'"},
		{false, []string{"uri", "amqps://h/?verify=verify_none", "queue", "q"}, "option 'uri': the query parameter 'verify' is not read; use the option 'tls.insecure-skip-verify' (the server's certificate is verified unless it is 'true')"},
		{false, []string{"uri", "amqp://u:pw@h/?hearbeat=5", "queue", "q"}, `option 'uri': unknown query parameter 'hearbeat' (did you mean "heartbeat"?); an AMQP URI takes heartbeat, connection_timeout, channel_max, frame_max and auth_mechanism; TLS through the tls.* options`},
		{false, []string{"uri", "amqp://h/?channelmax=5", "queue", "q"}, `unknown query parameter 'channelmax' (did you mean "channel_max"?)`},
		{false, []string{"uri", "amqp://h/?prefetch=5", "queue", "q"}, `option 'uri': unknown query parameter 'prefetch'; an AMQP URI takes heartbeat,`},
		{false, []string{"uri", "amqp://h/?heartbeat=5s", "queue", "q"}, "option 'uri': the query parameter heartbeat=5s must be a whole number of seconds from 0 to 65535"},
		{false, []string{"uri", "amqp://h/?heartbeat=-1", "queue", "q"}, "the query parameter heartbeat=-1 must be a whole number of seconds from 0 to 65535"},
		{false, []string{"uri", "amqp://h/?heartbeat=65536", "queue", "q"}, "the query parameter heartbeat=65536 must be a whole number of seconds from 0 to 65535"},
		{false, []string{"uri", "amqp://h/?heartbeat=", "queue", "q"}, "the query parameter heartbeat= must be a whole number of seconds"},
		{false, []string{"uri", "amqp://h/?heartbeat=5&heartbeat=6", "queue", "q"}, "option 'uri': the query parameter 'heartbeat' is given 2 times"},
		{false, []string{"uri", "amqp://h/?heartbeat=5", "queue", "q", "heartbeat", "10 s"}, "option 'uri' asks for heartbeat=5 (seconds) and option 'heartbeat' for 10 s: set one of them"},
		{false, []string{"uri", "amqp://h/?channel_max=10abc", "queue", "q"}, "the query parameter channel_max=10abc must be a number of channels from 0 to 65535"},
		{false, []string{"uri", "amqp://h/?frame_max=1024", "queue", "q"}, "the query parameter frame_max=1024 is below 4096 bytes, the least AMQP 0-9-1 allows (0: the broker's)"},
		{false, []string{"uri", "amqp://h/?frame_max=1%20kb", "queue", "q"}, "the query parameter frame_max=1 kb must be a number of bytes from 0 to 2147483647"},
		{false, []string{"uri", "amqp://h/?connection_timeout=0", "queue", "q"}, "the query parameter connection_timeout=0 would give up before connecting"},
		{false, []string{"uri", "amqp://h/?connection_timeout=1.5", "queue", "q"}, "the query parameter connection_timeout=1.5 must be a whole number of milliseconds"},
		{false, []string{"uri", "amqp://h/?auth_mechanism=plain&auth_mechanism=scram-sha-256", "queue", "q"}, "option 'uri': auth_mechanism=scram-sha-256 is not a SASL mechanism the connector speaks: plain, amqplain or external"},
		{true, []string{"uri", "amqp://h/?auth_mechanism=external", "queue", "q"}, "option 'uri': auth_mechanism=external authenticates with a client certificate: use amqps:// with the options 'tls.cert-file' and 'tls.key-file'"},
		{false, []string{"uri", "amqps://h/?auth_mechanism=external", "queue", "q"}, "auth_mechanism=external authenticates with a client certificate"},
		{false, []string{"uri", "amqp://u:pw@h/prod#x", "queue", "q"}, "option 'uri' = 'amqp://u:xxxxx@h/prod#x' has a fragment (after '#'), which an AMQP URI has none of; a '#' in a user name or password is written %23"},
		{false, []string{"uri", "amqp://u:pw@h/", "queue", "q", "tls.ca-file", "/ca.pem"}, "option 'tls.ca-file' asks for TLS, but option 'uri' = 'amqp://u:xxxxx@h/' is plain AMQP (amqps:// is AMQP over TLS, port 5671 by default)"},
		{true, []string{"uri", "amqps://h/", "queue", "q", "tls.ca-file", "/nonexistent/ca.pem"}, "rabbitmq: option 'tls.ca-file': cannot read the CA certificates: open /nonexistent/ca.pem"},
		{true, []string{"uri", "amqps://h/", "queue", "q", "tls.insecure-skip-verfy", "true"}, `unsupported option 'tls.insecure-skip-verfy' (did you mean "tls.insecure-skip-verify"?)`},
		{false, []string{"uri", "amqp://h/", "queue", "q", "prefetch-count", "70000"}, "option 'prefetch-count' must be between 1 and 65535, not 70000"},
		{false, []string{"uri", "amqp://h/", "queue", "q", "sink.mandatory", "true"}, "a source table takes no 'sink.' options"},
		{false, []string{"uri", "amqp://h/", "queue", "q", "routing-key", "k"}, "option 'routing-key' of a source binds the queue to 'exchange', which is not set"},
		{false, []string{"uri", "amqp://h/", "queue", "q", "queue.arguments", "x-max-length"}, "option 'queue.arguments' is k=v pairs separated by ';'"},
		{true, []string{"uri", "amqp://h/"}, "a rabbitmq sink needs 'queue', or 'exchange' and 'routing-key', or 'sink.routing-key-column'"},
		{true, []string{"uri", "amqp://h/", "queue", "q", "sink.delivery-guarantee", "exactly-once"}, "a rabbitmq sink cannot be 'exactly-once'"},
		{true, []string{"uri", "amqp://h/", "queue", "q", "prefetch-count", "5"}, "a sink table takes no source options"},
		{true, []string{"uri", "amqp://h/", "exchange", "e", "routing-key", "a;b"}, "option 'routing-key' of a sink is one routing key, not 2"},
		{true, []string{"uri", "amqp://h/", "queue", "q", "sink.routing-key-column", "x"}, "option 'sink.routing-key-column': the table has no column 'x' (columns: n)"},
		{true, []string{"uri", "amqp://h/", "queue", "q", "sink.delivery-mode", "2"}, "option 'sink.delivery-mode' must be 'persistent' or 'transient', not '2'"},
	}
	for _, tc := range cases {
		tab := connector.Table{Name: "t", Schema: intSchema, Options: options(tc.kv...)}
		var err error
		if tc.sink {
			_, err = Factory{}.CreateSink(tab, testEnv(nil, nil))
		} else {
			_, err = Factory{}.CreateSource(tab, testEnv(nil, nil))
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v\nwant %s", tc.kv, err, tc.want)
		}
	}
	args, err := parseArguments("x-queue-type=quorum; x-max-length=10 ;x-single-active-consumer=true")
	if err != nil || args["x-queue-type"] != "quorum" || args["x-max-length"] != int64(10) || args["x-single-active-consumer"] != true {
		t.Errorf("got %v, %v", args, err)
	}
}

// TestSinkConnectionLossIsNoReturn: when a connection goes, amqp091-go
// closes the channel of returned messages; a receive from it then yields
// an empty amqp.Return, which the sink once took for a message the
// broker returned (and failed with "returned a message to exchange ”
// ... (0)") rather than connecting again. Each loss has the sink waiting
// for confirmations, where the closed channel competes with the others.
func TestSinkConnectionLossIsNoReturn(t *testing.T) {
	b := amqptest.Start(t)
	b.DeclareQueue("out", true)
	s, err := Factory{}.CreateSink(connector.Table{Name: "out", Schema: intSchema, Options: options("uri", b.URL, "queue", "out")}, testEnv(nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	const rounds, per = 30, 200
	for round := range rounds {
		bt := &types.Batch{}
		for i := range per {
			bt.AddRow(types.Insert, types.Origin{}, 1)[0] = types.IntValue(types.KindInt, int64(round*per+i))
		}
		if err := s.Write(ctx, bt); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		b.KillConnections() // with messages unconfirmed
		if err := s.Flush(ctx); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
	seen := map[string]bool{}
	for _, m := range b.Drain("out") {
		seen[string(m.Body)] = true
	}
	if len(seen) != rounds*per {
		t.Fatalf("%d distinct messages arrived, want %d", len(seen), rounds*per)
	}
}

// TestDialTimeout: an attempt to connect waits for the URI's
// connection_timeout (milliseconds, RabbitMQ's meaning) when it is
// given, above the 10 s that 'connect.timeout' allows an attempt
// otherwise.
func TestDialTimeout(t *testing.T) {
	for _, c := range []struct {
		uri, connectTimeout string
		want                time.Duration
	}{
		{"amqp://h/", "", 10 * time.Second},
		{"amqp://h/", "500 ms", time.Second},
		{"amqp://h/", "4 s", 4 * time.Second},
		{"amqp://h/?connection_timeout=250", "", 250 * time.Millisecond},
		{"amqp://h/?connection_timeout=60000", "5 s", time.Minute},
	} {
		o := options("uri", c.uri, "queue", "q")
		if c.connectTimeout != "" {
			o["connect.timeout"] = c.connectTimeout
		}
		cfg, err := parseConfig(connector.Table{Name: "t", Schema: intSchema, Options: o}, testEnv(nil, nil), false)
		if err != nil {
			t.Fatalf("%s: %v", c.uri, err)
		}
		if cfg.dialTimeout != c.want {
			t.Errorf("%s with connect.timeout %q: an attempt waits %v, want %v", c.uri, c.connectTimeout, cfg.dialTimeout, c.want)
		}
	}
}
