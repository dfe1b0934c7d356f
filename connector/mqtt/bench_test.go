package mqtt_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/internal/mqtttest"
)

// BenchmarkMQTTRules runs MQTT → filter → MQTT rules: one statement set
// of R rules over one source table (one subscription, one decode; the
// rules' WHERE clauses evaluated together), each rule publishing its
// alerts to a topic of its own through a sink (a connection) of its own.
// A load client publishes b.N JSON readings of 100 devices at QoS 0,
// paced so that the broker never holds more than a few thousand for the
// job; rule k alerts on device k above 50 degrees. msgs/s counts input
// messages from the first published to the last alert received; heap-MiB
// is the heap in use with the job running, less the engine's before it
// started (run with rules=1 and rules=100 to get the cost of a rule).
// Against the embedded broker the broker runs in the benchmark's process
// (and GOMAXPROCS); with SLUICE_MQTT_ADDR also against that broker.
func BenchmarkMQTTRules(b *testing.B) {
	type broker struct{ name, url string }
	brokers := []broker{{"embedded", ""}}
	if a := os.Getenv("SLUICE_MQTT_ADDR"); a != "" {
		brokers = append(brokers, broker{"mosquitto", a})
	}
	for _, br := range brokers {
		for _, rules := range []int{1, 100} {
			for _, outQoS := range []int{0, 1} {
				b.Run(fmt.Sprintf("%s/rules=%d/out-qos=%d", br.name, rules, outQoS), func(b *testing.B) {
					benchRules(b, br.url, rules, outQoS)
				})
			}
		}
	}
}

func benchRules(b *testing.B, url string, rules, outQoS int) {
	if url == "" {
		url = mqtttest.Start(b).URL
	}
	addr := strings.TrimPrefix(url, "tcp://")
	prefix := fmt.Sprintf("bench%d", time.Now().UnixNano())
	sub := mqtttest.Dial(b, addr, prefix+"-sub")
	sub.Subscribe(b, prefix+"/alerts/#")
	pub := mqtttest.Dial(b, addr, prefix+"-pub")

	e, err := sluice.Open(sluice.Options{Stdout: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	var src strings.Builder
	fmt.Fprintf(&src, `CREATE TABLE readings (device STRING, temperature INT, humidity INT) WITH ('connector' = 'mqtt',
  'server' = '%s', 'topic' = '%s/devices/+', 'format' = 'json', 'qos' = '0', 'scan.session.persistent' = 'false');
`, url, prefix)
	for k := range rules {
		fmt.Fprintf(&src, `CREATE TABLE alerts%d (device STRING, temperature INT) WITH ('connector' = 'mqtt', 'server' = '%s',
  'topic' = '%s/alerts/%d', 'format' = 'json', 'qos' = '%d');
`, k, url, prefix, k, outQoS)
	}
	src.WriteString("EXECUTE STATEMENT SET BEGIN\n")
	for k := range rules {
		fmt.Fprintf(&src, "INSERT INTO alerts%d SELECT device, temperature FROM readings WHERE device = 'd%d' AND temperature > 50;\n", k, k)
	}
	src.WriteString("END;\n")

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	res, err := e.Exec(context.Background(), "bench.sql", []byte(src.String()))
	if err != nil {
		b.Fatal(sluice.FormatError(err, []byte(src.String())))
	}
	j := res[len(res)-1].Job
	defer func() { j.Cancel(); <-j.Done() }()

	payload := func(i int) ([]byte, bool) {
		dev, temp := i%100, i*7%101
		return fmt.Appendf(nil, `{"device":"d%d","temperature":%d,"humidity":%d}`, dev, temp, i%97), dev < rules && temp > 50
	}
	// Warm up: probes until the job reads (it has subscribed), then 1,000
	// readings, until their alerts arrived (every sink has connected).
	deadline := time.Now().Add(30 * time.Second)
	for j.Metrics.RowsIn.Load() == 0 {
		select {
		case <-j.Done():
			b.Fatalf("the job ended: %v", j.Wait())
		default:
		}
		if time.Now().After(deadline) {
			b.Fatal("the job never read")
		}
		pub.Publish(b, prefix+"/devices/x", []byte(`{"device":"probe","temperature":0}`))
		pub.Flush(b)
		time.Sleep(20 * time.Millisecond)
	}
	const warm = 1000
	wantAlerts := int64(0)
	for i := range warm {
		p, alert := payload(i)
		if alert {
			wantAlerts++
		}
		pub.Publish(b, prefix+"/devices/x", p)
	}
	pub.Flush(b)
	for sub.Received() < wantAlerts {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d alerts arrived while warming up", sub.Received(), wantAlerts)
		}
		time.Sleep(time.Millisecond)
	}
	runtime.GC()
	var during runtime.MemStats
	runtime.ReadMemStats(&during)
	warmRows := j.Metrics.RowsIn.Load()

	b.ResetTimer()
	start := time.Now()
	const window = 4000
	for i := 0; i < b.N; {
		for int64(i)-(j.Metrics.RowsIn.Load()-warmRows) > window {
			time.Sleep(50 * time.Microsecond)
		}
		for n := 0; n < 500 && i < b.N; n++ {
			p, alert := payload(warm + i)
			if alert {
				wantAlerts++
			}
			pub.Publish(b, prefix+"/devices/x", p)
			i++
		}
		pub.Flush(b)
	}
	deadline = time.Now().Add(60 * time.Second)
	for (j.Metrics.RowsIn.Load()-warmRows < int64(b.N) || sub.Received() < wantAlerts) && time.Now().Before(deadline) {
		time.Sleep(100 * time.Microsecond)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	if got := j.Metrics.RowsIn.Load() - warmRows; got < int64(b.N) {
		b.Fatalf("the job read %d of %d messages (QoS 0: the broker dropped some?)", got, b.N)
	}
	if got := sub.Received(); got < wantAlerts {
		b.Fatalf("%d of %d alerts arrived", got, wantAlerts)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msgs/s")
	b.ReportMetric(float64(int64(during.HeapInuse)-int64(before.HeapInuse))/(1<<20), "heap-MiB")
	b.ReportMetric(float64(wantAlerts), "alerts")
}
