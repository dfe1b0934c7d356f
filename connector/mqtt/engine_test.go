package mqtt_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sluicesql/sluice/internal/enginetest"
	"github.com/sluicesql/sluice/internal/mqtttest"
)

var versions = []string{"5", "3.1.1"}

// TestSourceWildcardsAndMetadata reads two filters with wildcards, the
// message's topic, QoS and retain flag as METADATA columns.
func TestSourceWildcardsAndMetadata(t *testing.T) {
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			b := mqtttest.Start(t)
			e := enginetest.Open(t)
			j := e.Start(t, `
CREATE TABLE readings (
  id INT, temp DOUBLE,
  topic STRING METADATA VIRTUAL,
  q INT METADATA FROM 'qos' VIRTUAL,
  r BOOLEAN METADATA FROM 'retained' VIRTUAL
) WITH ('connector' = 'mqtt', 'server' = '$SERVER', 'topic' = 'sensors/+/temp; alerts/#',
  'format' = 'json', 'protocol-version' = '$V', 'qos' = '1');
CREATE TABLE out (id INT, temp DOUBLE, topic STRING, q INT, r BOOLEAN) WITH ('connector' = 'print');
INSERT INTO out SELECT id, temp, topic, q, r FROM readings WHERE temp > 20;`, "$SERVER", b.URL, "$V", v)
			b.WaitSubscribers("sensors/a/temp", 1, 5*time.Second)
			b.WaitSubscribers("alerts/x/y", 1, 5*time.Second)
			b.Publish("sensors/a/temp", []byte(`{"id":1,"temp":21.5}`), false, 1)
			b.Publish("sensors/b/temp", []byte(`{"id":2,"temp":19}`), false, 1)
			b.Publish("sensors/b/humidity", []byte(`{"id":3,"temp":30}`), false, 1)
			b.Publish("alerts/zone1/fire", []byte(`{"id":4,"temp":99}`), false, 0)
			b.Publish("sensors/c/temp", []byte(`{"id":5,"temp":25}`), false, 2)
			got := e.Out.WaitLines(t, "+I", 3)
			enginetest.Stop(t, j)
			want := []string{"+I[1, 21.5, sensors/a/temp, 1, FALSE]", "+I[4, 99.0, alerts/zone1/fire, 0, FALSE]", "+I[5, 25.0, sensors/c/temp, 1, FALSE]"}
			if got = e.Out.Lines("+I"); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// TestSourceQoS receives messages at each QoS, in order.
func TestSourceQoS(t *testing.T) {
	for _, v := range versions {
		for q := 0; q <= 2; q++ {
			t.Run(fmt.Sprintf("%s/qos%d", v, q), func(t *testing.T) {
				b := mqtttest.Start(t)
				e := enginetest.Open(t)
				j := e.Start(t, `
CREATE TABLE m (n INT, q INT METADATA FROM 'qos' VIRTUAL) WITH ('connector' = 'mqtt', 'server' = '$SERVER', 'topic' = 't',
  'format' = 'json', 'protocol-version' = '$V', 'qos' = '$Q');
CREATE TABLE out (n INT, q INT) WITH ('connector' = 'print');
INSERT INTO out SELECT * FROM m;`, "$SERVER", b.URL, "$V", v, "$Q", fmt.Sprint(q))
				b.WaitSubscribers("t", 1, 5*time.Second)
				const n = 300
				var want []string
				for i := range n {
					b.Publish("t", fmt.Appendf(nil, `{"n":%d}`, i), false, 2)
					want = append(want, fmt.Sprintf("+I[%d, %d]", i, q))
				}
				e.Out.WaitLines(t, "+I", n)
				enginetest.Stop(t, j)
				if got := e.Out.Lines("+I"); strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("got %d rows, want %d:\n%s", len(got), n, strings.Join(got[:min(len(got), 10)], "\n"))
				}
			})
		}
	}
}

// persistentJob is a job with durable state and checkpoints, named, so
// that a restart resumes it (and finds its MQTT session again).
const persistentJob = `
SET 'state.dir' = '$DIR';
SET 'pipeline.name' = 'persist';
SET 'execution.checkpointing.interval' = '$CP';
CREATE TABLE m (n INT) WITH ('connector' = 'mqtt', 'server' = '$SERVER', 'topic' = 'p/#',
  'format' = 'json', 'protocol-version' = '$V', 'qos' = '1');
CREATE TABLE out (n INT) WITH ('connector' = 'print');
INSERT INTO out SELECT * FROM m;`

// TestSourcePersistentSession stops a job, publishes while it is away
// and starts it again: it receives what was published meanwhile, and
// nothing twice (the final commit acknowledged what the first run read).
func TestSourcePersistentSession(t *testing.T) {
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			b := mqtttest.Start(t)
			dir := t.TempDir()
			repl := []string{"$SERVER", b.URL, "$V", v, "$DIR", dir, "$CP", "50ms"}
			e := enginetest.Open(t)
			j := e.Start(t, persistentJob, repl...)
			b.WaitSubscribers("p/x", 1, 5*time.Second)
			for i := range 20 {
				b.Publish("p/x", fmt.Appendf(nil, `{"n":%d}`, i), false, 1)
			}
			e.Out.WaitLines(t, "+I", 20)
			enginetest.Stop(t, j)
			e.Close()                  // frees the state directory
			for i := 20; i < 40; i++ { // while no one reads: the session keeps them
				b.Publish("p/x", fmt.Appendf(nil, `{"n":%d}`, i), false, 1)
			}
			e2 := enginetest.Open(t)
			j2 := e2.Start(t, persistentJob, repl...)
			e2.Out.WaitLines(t, "+I", 20)
			for i := 40; i < 50; i++ {
				b.Publish("p/x", fmt.Appendf(nil, `{"n":%d}`, i), false, 1)
			}
			e2.Out.WaitLines(t, "+I", 30)
			time.Sleep(100 * time.Millisecond) // anything more would be a duplicate
			enginetest.Stop(t, j2)
			got := append(e.Out.Lines("+I"), e2.Out.Lines("+I")...)
			var want []string
			for i := range 50 {
				want = append(want, fmt.Sprintf("+I[%d]", i))
			}
			// The embedded broker sends a session's queued messages in no
			// particular order (Mosquitto keeps it): compare as sets.
			sort.Strings(got)
			sort.Strings(want)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("got %d rows:\n%s\nwant 0..49 once each", len(got), strings.Join(got, " "))
			}
		})
	}
}

// TestSourceRedeliversAfterCrash cancels a job before any checkpoint
// completed: the next run gets every message again (at-least-once).
func TestSourceRedeliversAfterCrash(t *testing.T) {
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			b := mqtttest.Start(t)
			dir := t.TempDir()
			repl := []string{"$SERVER", b.URL, "$V", v, "$DIR", dir, "$CP", "1h"}
			e := enginetest.Open(t)
			j := e.Start(t, persistentJob, repl...)
			b.WaitSubscribers("p/x", 1, 5*time.Second)
			for i := range 10 {
				b.Publish("p/x", fmt.Appendf(nil, `{"n":%d}`, i), false, 1)
			}
			e.Out.WaitLines(t, "+I", 10)
			j.Cancel() // as a crash: no checkpoint, no final commit
			<-j.Done()
			e.Close()
			b.Publish("p/x", []byte(`{"n":10}`), false, 1)
			e2 := enginetest.Open(t)
			j2 := e2.Start(t, persistentJob, repl...)
			got := e2.Out.WaitLines(t, "+I", 11)
			enginetest.Stop(t, j2)
			seen := map[string]bool{}
			for _, l := range got {
				seen[l] = true
			}
			for i := range 11 {
				if !seen[fmt.Sprintf("+I[%d]", i)] {
					t.Errorf("message %d was not delivered again; got %v", i, got)
				}
			}
		})
	}
}

// TestSourceSharedSubscription splits a topic between two jobs of one
// shared group: each message goes to one of them.
func TestSourceSharedSubscription(t *testing.T) {
	b := mqtttest.Start(t)
	const ddl = `
SET 'pipeline.name' = '$NAME';
CREATE TABLE m (n INT) WITH ('connector' = 'mqtt', 'server' = '$SERVER', 'topic' = 's/+',
  'scan.shared-group' = 'g', 'format' = 'json', 'qos' = '1');
CREATE TABLE out (n INT) WITH ('connector' = 'print');
INSERT INTO out SELECT * FROM m;`
	e1, e2 := enginetest.Open(t), enginetest.Open(t)
	j1 := e1.Start(t, ddl, "$SERVER", b.URL, "$NAME", "one")
	j2 := e2.Start(t, ddl, "$SERVER", b.URL, "$NAME", "two")
	b.WaitSubscribers("s/1", 2, 5*time.Second)
	const n = 200
	for i := range n {
		b.Publish(fmt.Sprintf("s/%d", i%3), fmt.Appendf(nil, `{"n":%d}`, i), false, 1)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(e1.Out.Lines("+I"))+len(e2.Out.Lines("+I")) < n && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	enginetest.Stop(t, j1)
	enginetest.Stop(t, j2)
	a, c := e1.Out.Lines("+I"), e2.Out.Lines("+I")
	if len(a) == 0 || len(c) == 0 {
		t.Errorf("one job got everything: %d and %d rows", len(a), len(c))
	}
	all := append(a, c...)
	sort.Strings(all)
	seen := map[string]int{}
	for _, l := range all {
		seen[l]++
	}
	for i := range n {
		if k := seen[fmt.Sprintf("+I[%d]", i)]; k != 1 {
			t.Errorf("message %d delivered %d times", i, k)
		}
	}
}

// TestSourceRetained: retained messages are read only with
// 'scan.retained' = 'true'.
func TestSourceRetained(t *testing.T) {
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			b := mqtttest.Start(t)
			// A topic per run: a stopped job's subscription may linger a
			// moment in the broker, and count as the next one's.
			b.Publish("false/state", []byte(`{"n":1}`), true, 1)
			b.Publish("true/state", []byte(`{"n":1}`), true, 1)
			for _, retained := range []string{"false", "true"} {
				e := enginetest.Open(t)
				j := e.Start(t, `
CREATE TABLE m (n INT, r BOOLEAN METADATA FROM 'retained' VIRTUAL) WITH ('connector' = 'mqtt', 'server' = '$SERVER', 'topic' = '$R/#',
  'format' = 'json', 'protocol-version' = '$V', 'scan.retained' = '$R', 'scan.session.persistent' = 'false');
CREATE TABLE out (n INT, r BOOLEAN) WITH ('connector' = 'print');
INSERT INTO out SELECT * FROM m;`, "$SERVER", b.URL, "$V", v, "$R", retained)
				b.WaitSubscribers(retained+"/state", 1, 5*time.Second)
				b.Publish(retained+"/state", []byte(`{"n":2}`), false, 1)
				e.Out.WaitLines(t, "+I[2", 1)
				enginetest.Stop(t, j)
				want := "+I[2, FALSE]"
				if retained == "true" {
					want = "+I[1, TRUE]\n+I[2, FALSE]"
				}
				if got := strings.Join(e.Out.Lines("+I"), "\n"); got != want {
					t.Errorf("scan.retained = %s: got\n%s\nwant\n%s", retained, got, want)
				}
			}
		})
	}
}

// TestSourceMalformed applies each bad-record policy to a payload that
// is not JSON.
func TestSourceMalformed(t *testing.T) {
	const ddl = `
CREATE TABLE m (n INT) WITH ('connector' = 'mqtt', 'server' = '$SERVER', 'topic' = 'bad', 'format' = 'json', 'qos' = '1' $OPTS);
CREATE TABLE out (n INT) WITH ('connector' = 'print');
INSERT INTO out SELECT * FROM m;`
	publish := func(b *mqtttest.Broker) {
		b.WaitSubscribers("bad", 1, 5*time.Second)
		b.Publish("bad", []byte(`{"n":1}`), false, 1)
		b.Publish("bad", []byte(`not json`), false, 1)
		b.Publish("bad", []byte(`{"n":3}`), false, 1)
	}
	t.Run("fail", func(t *testing.T) {
		b := mqtttest.Start(t)
		e := enginetest.Open(t)
		j := e.Start(t, ddl, "$SERVER", b.URL, "$OPTS", "")
		publish(b)
		err := enginetest.WaitErr(t, j)
		if err == nil || !strings.Contains(err.Error(), "source m: topic 'bad' message-id") || !strings.Contains(err.Error(), "cannot decode record") {
			t.Errorf("got %v", err)
		}
	})
	t.Run("skip", func(t *testing.T) {
		b := mqtttest.Start(t)
		e := enginetest.Open(t)
		j := e.Start(t, ddl, "$SERVER", b.URL, "$OPTS", ", 'json.ignore-parse-errors' = 'true'")
		publish(b)
		e.Out.WaitLines(t, "+I", 2)
		// The skipped message is in the job's metrics while it runs (a
		// health check or an alert rule sees it), not only at its end.
		if h := j.Health(); h.Malformed != 1 {
			t.Errorf("while running: %d malformed records, want 1", h.Malformed)
		}
		enginetest.Stop(t, j)
		if h := j.Health(); h.Malformed != 1 {
			t.Errorf("after the end: %d malformed records, want 1", h.Malformed)
		}
		if got := strings.Join(e.Out.Lines("+I"), " "); got != "+I[1] +I[3]" {
			t.Errorf("got %s", got)
		}
	})
	t.Run("dead-letter", func(t *testing.T) {
		b := mqtttest.Start(t)
		e := enginetest.Open(t)
		dl := filepath.Join(t.TempDir(), "dead.txt")
		j := e.Start(t, ddl, "$SERVER", b.URL, "$OPTS", ", 'dead-letter.path' = '"+dl+"'")
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

// TestBrokerDownAtStart: with no broker, a source and a sink fail after
// 'connect.timeout' with an error that names the server.
func TestBrokerDownAtStart(t *testing.T) {
	b := mqtttest.Start(t)
	b.Stop()
	e := enginetest.Open(t)
	j := e.Start(t, `
CREATE TABLE m (n INT) WITH ('connector' = 'mqtt', 'server' = '$SERVER', 'topic' = 't', 'format' = 'json', 'connect.timeout' = '300 ms');
CREATE TABLE out (n INT) WITH ('connector' = 'print');
INSERT INTO out SELECT * FROM m;`, "$SERVER", b.URL)
	err := enginetest.WaitErr(t, j)
	want := "mqtt table 'm': cannot connect to " + b.URL + " within 300ms ('connect.timeout')"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("source: got %v\nwant %s", err, want)
	}
	j = e.Start(t, `
CREATE TABLE src (n INT) WITH ('connector' = 'datagen', 'number-of-rows' = '10');
CREATE TABLE snk (n INT) WITH ('connector' = 'mqtt', 'server' = '$SERVER', 'topic' = 't', 'format' = 'json', 'connect.timeout' = '300 ms');
INSERT INTO snk SELECT * FROM src;`, "$SERVER", b.URL)
	err = enginetest.WaitErr(t, j)
	want = "mqtt table 'snk': cannot connect to " + b.URL + " within 300ms ('connect.timeout')"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("sink: got %v\nwant %s", err, want)
	}
}

// TestAuthRefused: bad credentials fail the job at once, saying so.
func TestAuthRefused(t *testing.T) {
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			b := mqtttest.Start(t, mqtttest.WithUser("edge", "secret"))
			e := enginetest.Open(t)
			j := e.Start(t, `
CREATE TABLE m (n INT) WITH ('connector' = 'mqtt', 'server' = '$SERVER', 'topic' = 't', 'format' = 'json',
  'protocol-version' = '$V', 'username' = 'edge', 'password' = 'wrong');
CREATE TABLE out (n INT) WITH ('connector' = 'print');
INSERT INTO out SELECT * FROM m;`, "$SERVER", b.URL, "$V", v)
			err := enginetest.WaitErr(t, j)
			// Mochi answers a 3.1.1 client "not authorized" (5) rather than
			// "bad user name or password" (4).
			if err == nil || !strings.Contains(err.Error(), "the broker refused the connection: bad user name or password") &&
				!strings.Contains(err.Error(), "the broker refused the connection: not authorized") {
				t.Errorf("got %v", err)
			}
			if err != nil && strings.Contains(err.Error(), "wrong") {
				t.Errorf("the password shows in %v", err)
			}
			// The right password works.
			j = e.Start(t, `
CREATE TABLE m2 (n INT) WITH ('connector' = 'mqtt', 'server' = '$SERVER', 'topic' = 't', 'format' = 'json',
  'protocol-version' = '$V', 'username' = 'edge', 'password' = 'secret');
CREATE TABLE out2 (n INT) WITH ('connector' = 'print');
INSERT INTO out2 SELECT * FROM m2;`, "$SERVER", b.URL, "$V", v)
			b.WaitSubscribers("t", 1, 5*time.Second)
			b.Publish("t", []byte(`{"n":7}`), false, 1)
			e.Out.WaitLines(t, "+I[7]", 1)
			enginetest.Stop(t, j)
		})
	}
}

// TestFilterRules runs MQTT → filter → MQTT: a statement set of rules
// over one source table, each publishing its alerts to a topic of its
// own, read by a subscriber of the broker.
func TestFilterRules(t *testing.T) {
	b := mqtttest.Start(t)
	alerts := b.Collect("alerts/#")
	e := enginetest.Open(t)
	j := e.Start(t, `
CREATE TABLE readings (device STRING, temp DOUBLE) WITH ('connector' = 'mqtt', 'server' = '$SERVER', 'topic' = 'devices/+/data', 'format' = 'json');
CREATE TABLE hot (device STRING, temp DOUBLE) WITH ('connector' = 'mqtt', 'server' = '$SERVER', 'topic' = 'alerts/hot', 'format' = 'json');
CREATE TABLE cold (device STRING, temp DOUBLE, topic STRING) WITH ('connector' = 'mqtt', 'server' = '$SERVER', 'topic' = 'alerts/cold',
  'sink.topic-column' = 'topic', 'format' = 'json');
EXECUTE STATEMENT SET BEGIN
INSERT INTO hot SELECT * FROM readings WHERE temp > 30;
INSERT INTO cold SELECT device, temp, CONCAT('alerts/cold/', device) FROM readings WHERE temp < 0;
END;`, "$SERVER", b.URL)
	b.WaitSubscribers("devices/d1/data", 1, 5*time.Second)
	for i, temp := range []float64{35, 10, -5, 40, -1} {
		b.Publish(fmt.Sprintf("devices/d%d/data", i), fmt.Appendf(nil, `{"device":"d%d","temp":%g}`, i, temp), false, 1)
	}
	got := alerts.Wait(4, 10*time.Second)
	enginetest.Stop(t, j)
	var lines []string
	for _, m := range got {
		lines = append(lines, m.Topic+" "+m.Payload)
	}
	sort.Strings(lines)
	want := []string{
		`alerts/cold/d2 {"device":"d2","temp":-5.0,"topic":"alerts/cold/d2"}`,
		`alerts/cold/d4 {"device":"d4","temp":-1.0,"topic":"alerts/cold/d4"}`,
		`alerts/hot {"device":"d0","temp":35.0}`,
		`alerts/hot {"device":"d3","temp":40.0}`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

// TestSourceProperties reads MQTT 5 user properties and the content type
// as METADATA columns.
func TestSourceProperties(t *testing.T) {
	b := mqtttest.Start(t)
	e := enginetest.Open(t)
	j := e.Start(t, `
CREATE TABLE m (n INT, props MAP<STRING, STRING> METADATA FROM 'properties' VIRTUAL,
  ct STRING METADATA FROM 'content-type' VIRTUAL, dup BOOLEAN METADATA FROM 'duplicate' VIRTUAL,
  id INT METADATA FROM 'message-id' VIRTUAL)
WITH ('connector' = 'mqtt', 'server' = '$SERVER', 'topic' = 'p', 'format' = 'json', 'qos' = '0');
CREATE TABLE out (n INT, site STRING, kind STRING, ct STRING, dup BOOLEAN, id INT) WITH ('connector' = 'print');
INSERT INTO out SELECT n, props['site'], props['kind'], ct, dup, id FROM m;`, "$SERVER", b.URL)
	b.WaitSubscribers("p", 1, 5*time.Second)
	c := mqtttest.Dial(t, b.Addr, "props-pub")
	c.PublishProps(t, "p", []byte(`{"n":1}`), "application/json", "site", "north", "kind", "a", "kind", "b")
	c.PublishProps(t, "p", []byte(`{"n":2}`), "")
	c.Flush(t)
	got := e.Out.WaitLines(t, "+I", 2)
	enginetest.Stop(t, j)
	want := "+I[1, north, b, application/json, FALSE, 0] +I[2, null, null, null, FALSE, 0]"
	if strings.Join(got, " ") != want {
		t.Errorf("got  %s\nwant %s", strings.Join(got, " "), want)
	}
}

// TestReconnectCounted restarts the broker under a running job: the
// source connects again by itself, which the job's metrics count, says
// that the broker lost its session, and reads on.
func TestReconnectCounted(t *testing.T) {
	b := mqtttest.Start(t)
	e := enginetest.Open(t)
	j := e.Start(t, `
CREATE TABLE m (n INT) WITH ('connector' = 'mqtt', 'server' = '$SERVER', 'topic' = 't', 'format' = 'json',
  'reconnect.initial-backoff' = '10 ms', 'reconnect.max-backoff' = '50 ms', 'connect.timeout' = '1 s');
CREATE TABLE out (n INT) WITH ('connector' = 'print');
INSERT INTO out SELECT * FROM m;`, "$SERVER", b.URL)
	b.WaitSubscribers("t", 1, 5*time.Second)
	b.Publish("t", []byte(`{"n":1}`), false, 1)
	e.Out.WaitLines(t, "+I", 1)
	b.Stop()
	b.Restart() // a new broker: no session, the source subscribes again
	deadline := time.Now().Add(10 * time.Second)
	for b.Subscribers("t") == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	b.Publish("t", []byte(`{"n":2}`), false, 1)
	got := e.Out.WaitLines(t, "+I", 2)
	n := j.Health().Reconnects
	enginetest.Stop(t, j)
	if strings.Join(got, " ") != "+I[1] +I[2]" {
		t.Errorf("got %v\nlog:\n%s", got, e.Log)
	}
	if n < 1 {
		t.Errorf("%d reconnections counted", n)
	}
	if !strings.Contains(e.Log.String(), "lost the connection to "+b.URL) {
		t.Errorf("log:\n%s", e.Log)
	}
	// The new broker has not the reader's persistent session: what was
	// published for it meanwhile is lost, which the log must say.
	if !strings.Contains(e.Log.String(), "did not keep the reader's session") {
		t.Errorf("the lost session is not reported; log:\n%s", e.Log)
	}
}
