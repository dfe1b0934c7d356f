package rabbitmq_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluicesql/sluice/internal/amqptest"
	"github.com/sluicesql/sluice/internal/enginetest"
	"github.com/sluicesql/sluice/internal/tlstest"
)

// TestTLS runs a source and a sink against a broker that speaks AMQP over
// TLS (amqps://) and requires a client certificate (mutual TLS); a CA that
// did not sign the broker's certificate, or no client certificate, fails
// the job at once, saying what to check.
func TestTLS(t *testing.T) {
	ca := tlstest.NewCA(t, "broker")
	clients := tlstest.NewCA(t, "clients")
	client := clients.Client("sluice")
	b := amqptest.Start(t, amqptest.WithTLS(ca.ServerConfig(clients)))
	if !strings.HasPrefix(b.URL, "amqps://") {
		t.Fatalf("URL %s", b.URL)
	}
	b.DeclareQueue("in", true)
	b.DeclareQueue("out", true)
	tlsOpts := fmt.Sprintf("'tls.ca-file' = '%s', 'tls.cert-file' = '%s', 'tls.key-file' = '%s'", ca.CertFile, client.CertFile, client.KeyFile)

	t.Run("round trip", func(t *testing.T) {
		e := enginetest.Open(t)
		j := e.Start(t, `
CREATE TABLE src (n INT) WITH ('connector' = 'rabbitmq', 'uri' = '$URI', 'queue' = 'in', 'format' = 'json', $TLS);
CREATE TABLE snk (n INT) WITH ('connector' = 'rabbitmq', 'uri' = '$URI', 'queue' = 'out', 'format' = 'json', $TLS);
INSERT INTO snk SELECT n * 10 FROM src;`, "$URI", b.URL, "$TLS", tlsOpts)
		b.WaitConsumers("in", 1, 5*time.Second)
		publishN(t, b, "in", 1, 4)
		waitQueue(t, b, "out", amqptest.QueueStats{Ready: 3})
		enginetest.Stop(t, j)
		var got []string
		for _, m := range b.Drain("out") {
			got = append(got, string(m.Body))
		}
		if want := `{"n":10} {"n":20} {"n":30}`; strings.Join(got, " ") != want {
			t.Errorf("got %v, want %s", got, want)
		}
	})

	other := tlstest.NewCA(t, "other")
	for _, c := range []struct {
		name string
		opts string
		want []string
	}{
		{"unknown CA", fmt.Sprintf("'tls.ca-file' = '%s', 'tls.cert-file' = '%s', 'tls.key-file' = '%s'", other.CertFile, client.CertFile, client.KeyFile),
			[]string{"TLS handshake: tls: failed to verify certificate: x509: certificate signed by unknown authority", "signed by no CA of 'tls.ca-file'"}},
		{"no client certificate", fmt.Sprintf("'tls.ca-file' = '%s'", ca.CertFile),
			[]string{"tls: certificate required", "the server asks for a client certificate"}},
	} {
		for _, role := range []string{"source", "sink"} {
			t.Run(c.name+"/"+role, func(t *testing.T) {
				e := enginetest.Open(t)
				ddl := `
CREATE TABLE m (n INT) WITH ('connector' = 'rabbitmq', 'uri' = '$URI', 'queue' = 'in', 'format' = 'json', 'connect.timeout' = '1 min', $TLS);
CREATE TABLE out (n INT) WITH ('connector' = 'print');
INSERT INTO out SELECT * FROM m;`
				if role == "sink" {
					ddl = `
CREATE TABLE g (n INT) WITH ('connector' = 'datagen', 'number-of-rows' = '3');
CREATE TABLE m (n INT) WITH ('connector' = 'rabbitmq', 'uri' = '$URI', 'queue' = 'out', 'format' = 'json', 'connect.timeout' = '1 min', $TLS);
INSERT INTO m SELECT * FROM g;`
				}
				j := e.Start(t, ddl, "$URI", b.URL, "$TLS", c.opts)
				err := enginetest.WaitErr(t, j)
				for _, w := range append(c.want, "@"+b.Addr+"/: ") {
					if err == nil || !strings.Contains(err.Error(), w) {
						t.Errorf("got %v\nwant %s", err, w)
					}
				}
			})
		}
	}
}

// TestExternalAuth: with auth_mechanism=external in the URI the source and
// the sink log in as their client certificate says (SASL EXTERNAL), not
// with the URI's user name and password.
func TestExternalAuth(t *testing.T) {
	ca := tlstest.NewCA(t, "broker")
	clients := tlstest.NewCA(t, "clients")
	client := clients.Client("sluice")
	b := amqptest.Start(t, amqptest.WithTLS(ca.ServerConfig(clients)), amqptest.WithUser("guest", "guest"), amqptest.WithUser("sluice", "unused"),
		amqptest.WithMechanisms("PLAIN", "AMQPLAIN", "EXTERNAL"))
	b.DeclareQueue("in", true)
	b.DeclareQueue("out", true)
	tlsOpts := fmt.Sprintf("'tls.ca-file' = '%s', 'tls.cert-file' = '%s', 'tls.key-file' = '%s'", ca.CertFile, client.CertFile, client.KeyFile)
	e := enginetest.Open(t)
	j := e.Start(t, `
CREATE TABLE src (n INT) WITH ('connector' = 'rabbitmq', 'uri' = '$URI', 'queue' = 'in', 'format' = 'json', $TLS);
CREATE TABLE snk (n INT) WITH ('connector' = 'rabbitmq', 'uri' = '$URI', 'queue' = 'out', 'format' = 'json', $TLS);
INSERT INTO snk SELECT n + 1 FROM src;`, "$URI", b.URL+"?auth_mechanism=external", "$TLS", tlsOpts)
	b.WaitConsumers("in", 1, 5*time.Second)
	publishN(t, b, "in", 1, 3)
	waitQueue(t, b, "out", amqptest.QueueStats{Ready: 2})
	cs := b.Clients()
	enginetest.Stop(t, j)
	if len(cs) != 2 {
		t.Fatalf("clients %+v, want the source's and the sink's", cs)
	}
	for _, c := range cs {
		if c.Mechanism != "EXTERNAL" || c.User != "sluice" {
			t.Errorf("%s logged in with %s as '%s', want EXTERNAL as 'sluice'", c.Name, c.Mechanism, c.User)
		}
	}
}
