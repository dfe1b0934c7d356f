package redis

import (
	"context"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/internal/tlstest"
	"github.com/sluicesql/sluice/types"
)

// TestTLS writes through a sink and reads back through a lookup, against
// a miniredis that speaks TLS only and requires a client certificate
// (mutual TLS): the sink by a rediss:// URL, the lookup by host and port
// with the TLS options. A CA that did not sign the server's certificate,
// or no client certificate, fails at once, without retries, saying what
// to check.
func TestTLS(t *testing.T) {
	ca := tlstest.NewCA(t, "server")
	clients := tlstest.NewCA(t, "clients")
	client := clients.Client("sluice")
	mr := miniredis.NewMiniRedis()
	if err := mr.StartTLS(ca.ServerConfig(clients)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mr.Close)
	tlsOpts := func(o connector.Options, ca *tlstest.CA, client *tlstest.Cert) connector.Options {
		o["connector"] = "redis"
		o["key-prefix"] = "t:"
		o["tls.ca-file"] = ca.CertFile
		if client != nil {
			o["tls.cert-file"], o["tls.key-file"] = client.CertFile, client.KeyFile
		}
		return o
	}
	pk := []string{"tenant", "id"}
	key := []types.Value{types.StringValue("acme"), types.BigIntValue(1)}

	s := openSink(t, schema, pk, tlsOpts(connector.Options{"url": "rediss://" + mr.Addr(), "sink.buffer-flush.interval": "0"}, ca, client))
	write(t, s, row(types.Insert, types.StringValue("acme"), types.BigIntValue(1), types.StringValue("one"), types.NullValue, types.NullValue))
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := mr.HGet("t:acme:1", "name"); got != "one" {
		t.Fatalf("HGET: %q", got)
	}
	l := open(t, schema, pk, tlsOpts(connector.Options{"host": mr.Host(), "port": mr.Port()}, ca, client), env(nil))
	if got := lookup(t, l, []int{0, 1}, key...); got != "acme|1|one|NULL|NULL" {
		t.Errorf("lookup: %s", got)
	}

	other := tlstest.NewCA(t, "other")
	for _, c := range []struct {
		name   string
		ca     *tlstest.CA
		client *tlstest.Cert
		want   []string
	}{
		{"unknown CA", other, client, []string{"TLS handshake: tls: failed to verify certificate: x509: certificate signed by unknown authority", "signed by no CA of 'tls.ca-file'"}},
		{"no client certificate", ca, nil, []string{"tls: certificate required", "the server asks for a client certificate"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := open(t, schema, pk, tlsOpts(connector.Options{"host": mr.Host(), "port": mr.Port(), "lookup.max-retries": "3"}, c.ca, c.client), env(nil))
			_, err := l.Lookup(context.Background(), []int{0, 1}, key, nil)
			for _, w := range append(c.want, "redis table dim: HGETALL t:acme:1: ") {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("lookup: got %v\nwant %s", err, w)
				}
			}
			if err != nil && strings.Contains(err.Error(), "retries") {
				t.Errorf("lookup: retried: %v", err)
			}
			s := openSink(t, schema, pk, tlsOpts(connector.Options{"url": "rediss://" + mr.Addr(), "sink.max-retries": "3", "sink.buffer-flush.interval": "0"}, c.ca, c.client))
			write(t, s, row(types.Insert, types.StringValue("acme"), types.BigIntValue(2), types.StringValue("two"), types.NullValue, types.NullValue))
			err = s.Flush(context.Background())
			for _, w := range append(c.want, "redis table 'dim': cannot write 1 ") {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("sink: got %v\nwant %s", err, w)
				}
			}
			if _, retries := s.Stats(); retries != 0 {
				t.Errorf("sink: %d retries", retries)
			}
		})
	}
}

// TestTLSOptions: the TLS options beside a redis:// URL are refused; a
// misspelt one is named with the right spelling.
func TestTLSOptions(t *testing.T) {
	for _, c := range []struct {
		opts connector.Options
		want string
	}{
		{connector.Options{"url": "redis://u:pw@127.0.0.1:6379", "tls.ca-file": "ca.pem"},
			"redis: option 'tls.ca-file' asks for TLS, but option 'url' = 'redis://u:xxxxx@127.0.0.1:6379' is plain Redis (rediss:// is Redis over TLS)"},
		{connector.Options{"url": "rediss://127.0.0.1:6379", "tls.cert-file": "c.pem"}, "redis: option 'tls.cert-file' needs 'tls.key-file'"},
		{connector.Options{"host": "127.0.0.1", "tls.ca-file": "/nonexistent/ca.pem"}, "redis: option 'tls.ca-file': cannot read the CA certificates: open /nonexistent/ca.pem"},
		{connector.Options{"host": "127.0.0.1", "tls.cafile": "ca.pem"}, `unsupported option 'tls.cafile' (did you mean "tls.ca-file"?)`},
	} {
		c.opts["connector"] = "redis"
		_, err := New().CreateLookup(connector.Table{Name: "d", Schema: schema, PrimaryKey: []string{"tenant", "id"}, Options: c.opts}, env(nil))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v\nwant %s", c.opts, err, c.want)
		}
	}
}
