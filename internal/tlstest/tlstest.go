// Package tlstest makes certificate authorities and the certificates they
// sign, in memory and as PEM files in a test's temporary folder, for tests
// of TLS connections against real servers on loopback: a server
// certificate for 127.0.0.1, ::1 and localhost, client certificates for
// mutual TLS, and the server configurations that present and ask for them.
//
// Keys are ECDSA P-256: making one takes well under a millisecond, so
// every test can have a CA of its own.
package tlstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// CA is a certificate authority of a test.
type CA struct {
	// CertFile is the CA's certificate as a PEM file.
	CertFile string
	// Pool holds the CA's certificate.
	Pool *x509.CertPool

	tb   testing.TB
	name string
	dir  string
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// Cert is a certificate and its key, in memory and as PEM files.
type Cert struct {
	TLS      tls.Certificate
	CertFile string
	KeyFile  string
}

var serial atomic.Int64

// NewCA makes a CA called name (it names the files too).
func NewCA(tb testing.TB, name string) *CA {
	tb.Helper()
	key := newKey(tb)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(serial.Add(1)),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatal(err)
	}
	ca := &CA{tb: tb, name: name, dir: tb.TempDir(), cert: cert, key: key, Pool: x509.NewCertPool()}
	ca.Pool.AddCert(cert)
	ca.CertFile = ca.write(name+"-ca.pem", "CERTIFICATE", der)
	return ca
}

// Server issues a server certificate for 127.0.0.1, ::1 and localhost.
func (ca *CA) Server() *Cert {
	ca.tb.Helper()
	return ca.issue("server", true, "localhost", "127.0.0.1", "::1")
}

// ServerFor issues a server certificate for the given host names only,
// for tests of a client that dials the server by another name.
func (ca *CA) ServerFor(names ...string) *Cert {
	ca.tb.Helper()
	return ca.issue("server", true, names...)
}

// Client issues a client certificate whose common name is name.
func (ca *CA) Client(name string) *Cert {
	ca.tb.Helper()
	return ca.issue(name, false)
}

// ServerConfig returns the configuration of a server that presents a
// certificate of ca and, when clients is not nil, requires of each client
// a certificate that clients signed.
func (ca *CA) ServerConfig(clients *CA) *tls.Config {
	ca.tb.Helper()
	cfg := &tls.Config{Certificates: []tls.Certificate{ca.Server().TLS}, MinVersion: tls.VersionTLS12}
	if clients != nil {
		cfg.ClientCAs = clients.Pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg
}

// issue makes a certificate; a server's is for hosts (names and IP
// addresses).
func (ca *CA) issue(name string, server bool, hosts ...string) *Cert {
	ca.tb.Helper()
	key := newKey(ca.tb)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial.Add(1)),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		for _, h := range hosts {
			if ip := net.ParseIP(h); ip != nil {
				tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
			} else {
				tmpl.DNSNames = append(tmpl.DNSNames, h)
			}
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		ca.tb.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		ca.tb.Fatal(err)
	}
	prefix := ca.name + "-" + name + "-" + big.NewInt(serial.Load()).String()
	return &Cert{
		TLS:      tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key},
		CertFile: ca.write(prefix+".pem", "CERTIFICATE", der),
		KeyFile:  ca.write(prefix+"-key.pem", "PRIVATE KEY", keyDER),
	}
}

func (ca *CA) write(name, kind string, der []byte) string {
	ca.tb.Helper()
	path := filepath.Join(ca.dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		ca.tb.Fatal(err)
	}
	return path
}

func newKey(tb testing.TB) *ecdsa.PrivateKey {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	return key
}
