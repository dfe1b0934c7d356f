package mqtt_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/internal/enginetest"
	"github.com/sluicesql/sluice/internal/mqtttest"
	"github.com/sluicesql/sluice/internal/tlstest"
)

// TestTLS runs a source and a sink against a broker that speaks MQTT over
// TLS and requires a client certificate (mutual TLS): messages go through
// with the right CA and certificate, and each wrong setting fails the job
// at once with an error that says what to check.
func TestTLS(t *testing.T) {
	ca := tlstest.NewCA(t, "broker")
	clients := tlstest.NewCA(t, "clients")
	client := clients.Client("sluice")
	b := mqtttest.Start(t, mqtttest.WithTLS(ca.ServerConfig(clients)))
	if !strings.HasPrefix(b.URL, "mqtts://") {
		t.Fatalf("URL %s", b.URL)
	}
	tlsOpts := "'tls.ca-file' = '" + ca.CertFile + "', 'tls.cert-file' = '" + client.CertFile + "', 'tls.key-file' = '" + client.KeyFile + "'"

	t.Run("source", func(t *testing.T) {
		e := enginetest.Open(t)
		j := e.Start(t, `
CREATE TABLE m (n INT) WITH ('connector' = 'mqtt', 'server' = '$SERVER', 'topic' = 'in', 'format' = 'json', $TLS);
CREATE TABLE out (n INT) WITH ('connector' = 'print');
INSERT INTO out SELECT * FROM m;`, "$SERVER", b.URL, "$TLS", tlsOpts)
		b.WaitSubscribers("in", 1, 5*time.Second)
		b.Publish("in", []byte(`{"n":7}`), false, 1)
		e.Out.WaitLines(t, "+I[7]", 1)
		enginetest.Stop(t, j)
	})

	t.Run("sink", func(t *testing.T) {
		got := b.Collect("out")
		s := newSink(t, connector.Options{"server": b.URL, "topic": "out",
			"tls.ca-file": ca.CertFile, "tls.cert-file": client.CertFile, "tls.key-file": client.KeyFile}, nil)
		write(t, s, 0, 20)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		order, _ := numbers(t, got.Wait(20, 10*time.Second))
		inOrder(t, order, 0, 20)
	})

	other := tlstest.NewCA(t, "other")
	stranger := other.Client("stranger")
	for _, c := range []struct {
		name string
		opts string
		want []string
	}{
		{"unknown CA", "'tls.ca-file' = '" + other.CertFile + "', 'tls.cert-file' = '" + client.CertFile + "', 'tls.key-file' = '" + client.KeyFile + "'",
			[]string{"TLS handshake: tls: failed to verify certificate: x509: certificate signed by unknown authority", "signed by no CA of 'tls.ca-file'"}},
		{"system CAs", "'tls.cert-file' = '" + client.CertFile + "', 'tls.key-file' = '" + client.KeyFile + "'",
			[]string{"certificate signed by unknown authority"}},
		{"server name", "'tls.ca-file' = '" + ca.CertFile + "', 'tls.server-name' = 'broker.example', 'tls.cert-file' = '" + client.CertFile + "', 'tls.key-file' = '" + client.KeyFile + "'",
			[]string{"x509: certificate is valid for localhost, not broker.example", "set 'tls.server-name'"}},
		{"no client certificate", "'tls.ca-file' = '" + ca.CertFile + "'",
			[]string{"tls: certificate required", "the server asks for a client certificate: set 'tls.cert-file' and 'tls.key-file'"}},
		{"client certificate of another CA", "'tls.ca-file' = '" + ca.CertFile + "', 'tls.cert-file' = '" + stranger.CertFile + "', 'tls.key-file' = '" + stranger.KeyFile + "'",
			[]string{"tls: unknown certificate authority", "the server refused the client's certificate"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := enginetest.Open(t)
			// 'connect.timeout' is long: the error must come at once,
			// not after trying again.
			j := e.Start(t, `
CREATE TABLE m (n INT) WITH ('connector' = 'mqtt', 'server' = '$SERVER', 'topic' = 't', 'format' = 'json', 'connect.timeout' = '1 min', $TLS);
CREATE TABLE out (n INT) WITH ('connector' = 'print');
INSERT INTO out SELECT * FROM m;`, "$SERVER", b.URL, "$TLS", c.opts)
			err := enginetest.WaitErr(t, j)
			for _, w := range c.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("got %v\nwant %s", err, w)
				}
			}
			if err != nil && strings.Contains(err.Error(), "'connect.timeout'") {
				t.Errorf("tried again until the timeout: %v", err)
			}
		})
	}
}

// TestTLSNotOnPlainBroker: a TLS client against a broker that does not
// speak TLS fails within 'connect.timeout', saying why.
func TestTLSNotOnPlainBroker(t *testing.T) {
	b := mqtttest.Start(t)
	ca := tlstest.NewCA(t, "broker")
	e := enginetest.Open(t)
	j := e.Start(t, `
CREATE TABLE m (n INT) WITH ('connector' = 'mqtt', 'server' = 'mqtts://$ADDR', 'topic' = 't', 'format' = 'json',
  'connect.timeout' = '300 ms', 'tls.ca-file' = '$CA');
CREATE TABLE out (n INT) WITH ('connector' = 'print');
INSERT INTO out SELECT * FROM m;`, "$ADDR", b.Addr, "$CA", ca.CertFile)
	err := enginetest.WaitErr(t, j)
	if err == nil || !strings.Contains(err.Error(), "TLS handshake") {
		t.Errorf("got %v", err)
	}
}
