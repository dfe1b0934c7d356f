package nats_test

import (
	"crypto/tls"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicesql/sluice/internal/enginetest"
	"github.com/sluicesql/sluice/internal/natstest"
	"github.com/sluicesql/sluice/internal/tlstest"
)

// TestTLS runs a JetStream source and sink against a server that requires
// TLS and a client certificate (mutual TLS): the source through a tls://
// URL, the sink through a nats:// one with the TLS options (a NATS server
// says it requires TLS and the client upgrades). A wrong CA, or no client
// certificate, fails the job at once, saying what to check.
func TestTLS(t *testing.T) {
	ca := tlstest.NewCA(t, "server")
	clients := tlstest.NewCA(t, "clients")
	client := clients.Client("sluice")
	s := natstest.Start(t, natstest.WithTLS(ca.ServerConfig(clients),
		&tls.Config{RootCAs: ca.Pool, Certificates: []tls.Certificate{client.TLS}, MinVersion: tls.VersionTLS12}))
	if !strings.HasPrefix(s.URL, "tls://") {
		t.Fatalf("URL %s", s.URL)
	}
	plainURL := "nats://" + strings.TrimPrefix(s.URL, "tls://")
	js := s.JetStream(t)
	natstest.CreateStream(t, js, jetstream.StreamConfig{Name: "IN", Subjects: []string{"in.>"}})
	natstest.CreateStream(t, js, jetstream.StreamConfig{Name: "OUT", Subjects: []string{"out.>"}})
	natstest.Publish(t, js, "in.a", `{"n":1}`, `{"n":2}`, `{"n":3}`)
	tlsOpts := fmt.Sprintf("'tls.ca-file' = '%s', 'tls.cert-file' = '%s', 'tls.key-file' = '%s'", ca.CertFile, client.CertFile, client.KeyFile)

	t.Run("round trip", func(t *testing.T) {
		e := enginetest.Open(t)
		j := e.Start(t, `
CREATE TABLE src (n INT) WITH ('connector' = 'nats', 'servers' = '$TLSURL', 'jetstream.stream' = 'IN', 'format' = 'json', $TLS);
CREATE TABLE snk (n INT) WITH ('connector' = 'nats', 'servers' = '$PLAINURL', 'jetstream.stream' = 'OUT', 'subject' = 'out.n',
  'sink.delivery-guarantee' = 'at-least-once', 'format' = 'json', $TLS);
INSERT INTO snk SELECT n * 10 FROM src;`, "$TLSURL", s.URL, "$PLAINURL", plainURL, "$TLS", tlsOpts)
		var msgs []natstest.Message
		for deadline := time.Now().Add(10 * time.Second); len(msgs) < 3 && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
			msgs = natstest.ReadStream(t, js, "OUT")
		}
		enginetest.Stop(t, j)
		var got []string
		for _, m := range msgs {
			got = append(got, m.Data)
		}
		if want := `{"n":10} {"n":20} {"n":30}`; strings.Join(got, " ") != want {
			t.Errorf("got %v, want %s; log:\n%s", got, want, e.Log)
		}
	})

	other := tlstest.NewCA(t, "other")
	for _, c := range []struct {
		name string
		opts string
		want []string
	}{
		{"unknown CA", fmt.Sprintf("'tls.ca-file' = '%s', 'tls.cert-file' = '%s', 'tls.key-file' = '%s'", other.CertFile, client.CertFile, client.KeyFile),
			[]string{"x509: certificate signed by unknown authority", "signed by no CA of 'tls.ca-file'"}},
		{"no client certificate", fmt.Sprintf("'tls.ca-file' = '%s'", ca.CertFile),
			[]string{"tls: certificate required", "the server asks for a client certificate"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := enginetest.Open(t)
			j := e.Start(t, `
CREATE TABLE m (n INT) WITH ('connector' = 'nats', 'servers' = '$SERVER', 'subject' = 't', 'format' = 'json', 'connect.timeout' = '1 min', $TLS);
CREATE TABLE out (n INT) WITH ('connector' = 'print');
INSERT INTO out SELECT * FROM m;`, "$SERVER", s.URL, "$TLS", c.opts)
			err := enginetest.WaitErr(t, j)
			for _, w := range append(c.want, "nats table 'm': cannot connect to "+s.URL+": ") {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("got %v\nwant %s", err, w)
				}
			}
		})
	}
}
