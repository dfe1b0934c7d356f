package connector_test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/internal/tlstest"
)

// TestClientTLSOptions lists option sets beside the error each gets, or
// "" for a valid one.
func TestClientTLSOptions(t *testing.T) {
	ca := tlstest.NewCA(t, "ca")
	client := ca.Client("c")
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	empty := write("empty.pem", "")
	notPEM := write("notpem.pem", "hello\n")
	keyPEM, err := os.ReadFile(client.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	keyOnly := write("key.pem", string(keyPEM))
	badCert := write("bad.pem", "-----BEGIN CERTIFICATE-----\naGVsbG8=\n-----END CERTIFICATE-----\n")
	other := tlstest.NewCA(t, "other").Client("o")
	block, _ := pem.Decode(keyPEM)
	encrypted := write("encrypted.pem", string(pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: block.Bytes})))
	legacy := write("legacy.pem", string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Headers: map[string]string{"Proc-Type": "4,ENCRYPTED", "DEK-Info": "AES-128-CBC,00"}, Bytes: block.Bytes})))
	missing := filepath.Join(dir, "missing.pem")

	for _, c := range []struct {
		opts connector.Options
		want string
	}{
		{connector.Options{"tls.ca-file": ca.CertFile}, ""},
		{connector.Options{"tls.ca-file": ca.CertFile, "tls.cert-file": client.CertFile, "tls.key-file": client.KeyFile, "tls.server-name": "h"}, ""},
		{connector.Options{"tls.insecure-skip-verify": "true"}, ""},
		{connector.Options{"tls.ca-file": missing}, "option 'tls.ca-file': cannot read the CA certificates: open " + missing + ": no such file or directory"},
		{connector.Options{"tls.ca-file": empty}, "option 'tls.ca-file': " + empty + " holds no PEM certificate"},
		{connector.Options{"tls.ca-file": notPEM}, "option 'tls.ca-file': " + notPEM + " holds no PEM certificate"},
		{connector.Options{"tls.ca-file": keyOnly}, "option 'tls.ca-file': " + keyOnly + " holds no PEM certificate (only PRIVATE KEY)"},
		{connector.Options{"tls.ca-file": badCert}, "option 'tls.ca-file': " + badCert + ": certificate 1: x509: malformed certificate"},
		{connector.Options{"tls.ca-file": ""}, "option 'tls.ca-file' must not be empty"},
		{connector.Options{"tls.cert-file": client.CertFile}, "option 'tls.cert-file' needs 'tls.key-file', the client certificate's private key"},
		{connector.Options{"tls.key-file": client.KeyFile}, "option 'tls.key-file' needs 'tls.cert-file', the client certificate"},
		{connector.Options{"tls.cert-file": missing, "tls.key-file": client.KeyFile}, "option 'tls.cert-file': cannot read the client certificate: open " + missing},
		{connector.Options{"tls.cert-file": client.CertFile, "tls.key-file": missing}, "option 'tls.key-file': cannot read the client key: open " + missing},
		{connector.Options{"tls.cert-file": keyOnly, "tls.key-file": client.KeyFile},
			"options 'tls.cert-file' (" + keyOnly + ") and 'tls.key-file' (" + client.KeyFile + "): tls: failed to find certificate PEM data in certificate input, but did find a private key"},
		{connector.Options{"tls.cert-file": client.CertFile, "tls.key-file": other.KeyFile}, "tls: private key does not match public key"},
		{connector.Options{"tls.cert-file": client.CertFile, "tls.key-file": encrypted},
			"option 'tls.key-file': " + encrypted + ": the private key is encrypted (ENCRYPTED PRIVATE KEY), which Sluice cannot read: write it unencrypted with 'openssl pkey -in key.pem -out key-unencrypted.pem'"},
		{connector.Options{"tls.cert-file": client.CertFile, "tls.key-file": legacy}, "the private key is encrypted (EC PRIVATE KEY with Proc-Type ENCRYPTED)"},
		{connector.Options{"tls.insecure-skip-verify": "yes"}, "option 'tls.insecure-skip-verify': expected true or false, got \"yes\""},
	} {
		cfg, err := c.opts.ClientTLS("127.0.0.1", false)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v", c.opts, err)
		case c.want == "" && cfg == nil:
			t.Errorf("%v: TLS is off", c.opts)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: got %v\nwant %s", c.opts, err, c.want)
		}
	}
}

// TestClientTLSOnOff: TLS is on when the address says so or a TLS option
// is set; RejectTLS refuses the options beside a plain address.
func TestClientTLSOnOff(t *testing.T) {
	cfg, err := connector.Options{}.ClientTLS("h", false)
	if cfg != nil || err != nil {
		t.Errorf("no options, plain address: %v, %v", cfg, err)
	}
	cfg, err = connector.Options{}.ClientTLS("broker.example", true)
	if err != nil || cfg == nil || cfg.ServerName != "broker.example" || cfg.RootCAs != nil || cfg.InsecureSkipVerify || cfg.MinVersion != tls.VersionTLS12 {
		t.Errorf("secure address: %+v, %v", cfg, err)
	}
	cfg, err = connector.Options{"tls.server-name": "other.example"}.ClientTLS("::1", false)
	if err != nil || cfg == nil || cfg.ServerName != "other.example" {
		t.Errorf("tls.server-name: %+v, %v", cfg, err)
	}
	if err := (connector.Options{"format": "json"}).RejectTLS("plain"); err != nil {
		t.Error(err)
	}
	err = connector.Options{"tls.server-name": "x", "tls.ca-file": "ca.pem"}.RejectTLS("option 'uri' = 'amqp://h/' is plain AMQP")
	if want := "option 'tls.ca-file' asks for TLS, but option 'uri' = 'amqp://h/' is plain AMQP"; err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

// TestClientTLSHandshake dials a TLS listener with the configuration
// ClientTLS builds: the right CA and client certificate pass, a CA that
// did not sign the server's certificate fails with a *TLSError.
func TestClientTLSHandshake(t *testing.T) {
	ca, clients := tlstest.NewCA(t, "server"), tlstest.NewCA(t, "clients")
	client := clients.Client("c")
	l, err := tls.Listen("tcp", "127.0.0.1:0", ca.ServerConfig(clients))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	peers := make(chan string, 4)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			tc := c.(*tls.Conn)
			if tc.Handshake() == nil {
				peers <- tc.ConnectionState().PeerCertificates[0].Subject.CommonName
			} else {
				peers <- ""
			}
			c.Close()
		}
	}()
	dial := func(o connector.Options) error {
		cfg, err := o.ClientTLS("127.0.0.1", true)
		if err != nil {
			t.Fatal(err)
		}
		c, err := tls.Dial("tcp", l.Addr().String(), cfg)
		if err == nil {
			// A TLS 1.3 server's verdict on the client comes after the
			// client's handshake: read for it.
			_, err = c.Read(make([]byte, 1))
			c.Close()
			if errors.Is(err, net.ErrClosed) || err != nil && strings.Contains(err.Error(), "EOF") {
				err = nil
			}
		}
		<-peers
		return connector.ClassifyTLS(err)
	}
	if err := dial(connector.Options{"tls.ca-file": ca.CertFile, "tls.cert-file": client.CertFile, "tls.key-file": client.KeyFile}); err != nil {
		t.Fatalf("mutual TLS: %v", err)
	}
	err = dial(connector.Options{"tls.ca-file": clients.CertFile, "tls.cert-file": client.CertFile, "tls.key-file": client.KeyFile})
	var te *connector.TLSError
	var ua x509.UnknownAuthorityError
	if !errors.As(err, &te) || !errors.As(err, &ua) || !strings.Contains(err.Error(), "signed by no CA of 'tls.ca-file'") {
		t.Errorf("wrong CA: %v", err)
	}
	err = dial(connector.Options{"tls.ca-file": ca.CertFile})
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "the server asks for a client certificate") {
		t.Errorf("no client certificate: %v", err)
	}
	if err := connector.ClassifyTLS(fmt.Errorf("dial: %w", net.ErrClosed)); errors.As(err, &te) {
		t.Errorf("a closed connection is not a TLS refusal: %v", err)
	}
}
