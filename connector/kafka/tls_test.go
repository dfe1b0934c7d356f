package kafka

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/internal/kafkatest"
	"github.com/sluicesql/sluice/internal/tlstest"
	"github.com/sluicesql/sluice/types"
)

// tlsBroker is a broker over TLS with a private CA and, when mutual, a
// second CA whose client certificates it requires.
type tlsBroker struct {
	bootstrap string
	ca        *tlstest.CA
	clients   *tlstest.CA // nil: no client certificate asked for
}

func startTLSBroker(t *testing.T, mutual bool, server *tls.Config, topics ...string) tlsBroker {
	t.Helper()
	b := tlsBroker{ca: tlstest.NewCA(t, "broker")}
	if mutual {
		b.clients = tlstest.NewCA(t, "clients")
	}
	if server == nil {
		server = b.ca.ServerConfig(b.clients)
	}
	helper := &tls.Config{RootCAs: b.ca.Pool}
	if mutual {
		helper.Certificates = []tls.Certificate{b.clients.Client("kafkatest").TLS}
	}
	b.bootstrap = kafkatest.StartTLS(t, kafkatest.TLS{Server: server, Client: helper}, 1, topics...)
	return b
}

// keystore writes a PEM key store: the client certificate then its key,
// in one file, as Kafka's PEM key stores hold them.
func keystore(t *testing.T, c *tlstest.Cert) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "keystore.pem")
	if err := os.WriteFile(path, []byte(readFile(t, c.CertFile)+readFile(t, c.KeyFile)), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// roundTrip writes rows through a sink of the table and reads them back
// through a bounded source of it.
func roundTrip(t *testing.T, connName, bootstrap string, opts connector.Options) {
	t.Helper()
	o := connector.Options{"connector": connName}
	if connName == "upsert-kafka" {
		o["key.format"], o["value.format"] = "json", "json"
	}
	for k, v := range opts {
		o[k] = v
	}
	tbl := table("t", bidSchema(), bootstrap, "t", o)
	if connName == "upsert-kafka" {
		tbl.Options["topic"], tbl.PrimaryKey = "u", []string{"id"}
	}
	ctx := context.Background()
	s := newSink(t, tbl)
	if err := s.Write(ctx, bidBatch(types.Insert, 0, 3)); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	tbl.Options["scan.bounded.mode"] = "latest-offset"
	got := fmt.Sprint(rowStrings(readAll(t, newSource(t, tbl))))
	if want := "[+I[0, i0] +I[1, i1] +I[2, i2]]"; got != want {
		t.Fatalf("%s read back %s, want %s", connName, got, want)
	}
}

// TestTLSRoundTrip writes and reads a topic over TLS with Kafka's PEM
// store properties: a private CA, mutual TLS with the key store in a file
// and inline, the kafka and upsert-kafka connectors, and host name checks
// turned off for a broker whose certificate is for another name.
func TestTLSRoundTrip(t *testing.T) {
	t.Run("private CA", func(t *testing.T) {
		b := startTLSBroker(t, false, nil, "t")
		roundTrip(t, "kafka", b.bootstrap, connector.Options{
			"properties.security.protocol":       "SSL",
			"properties.ssl.truststore.type":     "PEM",
			"properties.ssl.truststore.location": b.ca.CertFile,
		})
	})
	t.Run("mutual TLS, key store file", func(t *testing.T) {
		b := startTLSBroker(t, true, nil, "t", "u")
		for _, conn := range []string{"kafka", "upsert-kafka"} {
			roundTrip(t, conn, b.bootstrap, connector.Options{
				"properties.security.protocol":       "SSL",
				"properties.ssl.truststore.type":     "PEM",
				"properties.ssl.truststore.location": b.ca.CertFile,
				"properties.ssl.keystore.type":       "PEM",
				"properties.ssl.keystore.location":   keystore(t, b.clients.Client("sluice")),
			})
		}
	})
	t.Run("mutual TLS, inline", func(t *testing.T) {
		b := startTLSBroker(t, true, nil, "t")
		c := b.clients.Client("sluice")
		roundTrip(t, "kafka", b.bootstrap, connector.Options{
			"properties.security.protocol":              "SSL",
			"properties.ssl.truststore.type":            "PEM",
			"properties.ssl.truststore.certificates":    readFile(t, b.ca.CertFile),
			"properties.ssl.keystore.type":              "PEM",
			"properties.ssl.keystore.certificate.chain": readFile(t, c.CertFile),
			"properties.ssl.keystore.key":               readFile(t, c.KeyFile),
		})
	})
	t.Run("no host name check", func(t *testing.T) {
		ca := tlstest.NewCA(t, "broker")
		server := &tls.Config{Certificates: []tls.Certificate{ca.ServerFor("broker.example").TLS}}
		bs := kafkatest.StartTLS(t, kafkatest.TLS{Server: server, Client: &tls.Config{InsecureSkipVerify: true}}, 1, "t")
		opts := connector.Options{
			"properties.security.protocol":       "SSL",
			"properties.ssl.truststore.type":     "PEM",
			"properties.ssl.truststore.location": ca.CertFile,
		}
		err := openErr(t, tableWith(bs, opts), "source")
		if !isTLSError(err) || !strings.Contains(err.Error(), "certificate for 127.0.0.1") || !strings.Contains(err.Error(), "'properties.ssl.endpoint.identification.algorithm' = ''") {
			t.Fatalf("a certificate for another name, checked: got %v, want a TLS error with a hint at the option", err)
		}
		opts["properties.ssl.endpoint.identification.algorithm"] = ""
		roundTrip(t, "kafka", bs, opts)
		// The chain is still checked.
		opts["properties.ssl.truststore.location"] = tlstest.NewCA(t, "other").CertFile
		if err := openErr(t, tableWith(bs, opts), "sink"); !isTLSError(err) || !strings.Contains(err.Error(), "signed by unknown authority") {
			t.Fatalf("no host name check, wrong CA: got %v, want a TLS error", err)
		}
	})
}

func tableWith(bootstrap string, opts connector.Options) connector.Table {
	o := connector.Options{}
	for k, v := range opts {
		o[k] = v
	}
	return table("t", bidSchema(), bootstrap, "t", o)
}

// openErr creates a source or a sink of tbl and returns the error.
func openErr(t *testing.T, tbl connector.Table, kind string) error {
	t.Helper()
	if kind == "source" {
		_, err := registry().Source(tbl, env(t))
		return err
	}
	s, err := registry().Sink(tbl, env(t))
	if err == nil {
		s.Close()
	}
	return err
}

func isTLSError(err error) bool {
	var te *connector.TLSError
	return errors.As(err, &te)
}

// TestTLSRefused: certificates that fail on either side fail the source
// and the sink at once, as *connector.TLSError, with a hint naming the
// properties to check, rather than being retried until
// 'properties.default.api.timeout.ms' (left at its 60 s: a retry would
// end in a "cannot connect" error instead).
func TestTLSRefused(t *testing.T) {
	b := startTLSBroker(t, true, nil, "t")
	other := tlstest.NewCA(t, "other")
	good := keystore(t, b.clients.Client("sluice"))
	for _, c := range []struct {
		name string
		opts connector.Options
		want []string
	}{
		{"wrong CA", connector.Options{
			"properties.ssl.truststore.location": other.CertFile,
			"properties.ssl.keystore.location":   good,
		}, []string{"certificate signed by unknown authority", "signed by no CA of 'properties.ssl.truststore.location'"}},
		{"system CAs", connector.Options{
			"properties.ssl.keystore.location": good,
		}, []string{"certificate signed by unknown authority"}},
		{"no client certificate", connector.Options{
			"properties.ssl.truststore.location": b.ca.CertFile,
		}, []string{"certificate required", "the broker asks for a client certificate: set 'properties.ssl.keystore.type' = 'PEM' with 'properties.ssl.keystore.location'"}},
		{"client certificate of another CA", connector.Options{
			"properties.ssl.truststore.location": b.ca.CertFile,
			"properties.ssl.keystore.location":   keystore(t, other.Client("stranger")),
		}, []string{"remote error: tls: unknown certificate authority", "the broker refused the client's certificate"}},
	} {
		for _, kind := range []string{"source", "sink"} {
			opts := connector.Options{"properties.security.protocol": "SSL"}
			for k, v := range c.opts {
				opts[k] = v
				if strings.HasPrefix(k, "properties.ssl.truststore.") {
					opts["properties.ssl.truststore.type"] = "PEM"
				}
				if strings.HasPrefix(k, "properties.ssl.keystore.") {
					opts["properties.ssl.keystore.type"] = "PEM"
				}
			}
			err := openErr(t, tableWith(b.bootstrap, opts), kind)
			if !isTLSError(err) {
				t.Errorf("%s, %s: got %v, want a *connector.TLSError", c.name, kind, err)
				continue
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s, %s: got %v\nwant it to say %q", c.name, kind, err, w)
				}
			}
		}
	}
	// A plain client of a TLS broker is not a certificate refusal.
	if err := openErr(t, tableWith(b.bootstrap, nil), "source"); err == nil || isTLSError(err) || !strings.Contains(err.Error(), "TLS") {
		t.Errorf("plain client of a TLS broker: %v", err)
	}
}
