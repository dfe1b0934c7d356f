package connector

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"sort"
	"strings"
)

// Table options of a client's TLS, the same in every connector that dials
// a server (mqtt, nats, rabbitmq, redis).
const (
	// TLSCAFileOption names a PEM file of the CA certificates that a
	// server's certificate must chain to; without it, the system's.
	TLSCAFileOption = "tls.ca-file"
	// TLSCertFileOption and TLSKeyFileOption name the PEM files of the
	// client's certificate (its chain) and private key, for servers that
	// ask for one (mutual TLS): both or neither.
	TLSCertFileOption = "tls.cert-file"
	TLSKeyFileOption  = "tls.key-file"
	// TLSServerNameOption is the name the server's certificate must
	// have, and that the client sends (SNI); by default the host of the
	// address.
	TLSServerNameOption = "tls.server-name"
	// TLSInsecureSkipVerifyOption = 'true' checks no server certificate:
	// for tests only, as anyone between the client and the server can
	// then read and change the traffic.
	TLSInsecureSkipVerifyOption = "tls.insecure-skip-verify"
)

// TLSOptions returns the client TLS option keys, for a factory's
// CheckKnown list.
func TLSOptions() []string {
	return []string{TLSCAFileOption, TLSCertFileOption, TLSKeyFileOption, TLSServerNameOption, TLSInsecureSkipVerifyOption}
}

// tlsOption returns the first (in sorted order) client TLS option set,
// "" when none is.
func (o Options) tlsOption() string {
	keys := TLSOptions()
	sort.Strings(keys)
	for _, k := range keys {
		if _, ok := o[k]; ok {
			return k
		}
	}
	return ""
}

// RejectTLS returns an error when a client TLS option is set on a table
// whose address asks for a plain connection; plain says so, with the
// scheme that asks for TLS, e.g. "option 'server' = 'tcp://h:1883' is
// plain MQTT (use mqtts:// for MQTT over TLS)".
func (o Options) RejectTLS(plain string) error {
	if k := o.tlsOption(); k != "" {
		return fmt.Errorf("option '%s' asks for TLS, but %s", k, plain)
	}
	return nil
}

// ClientTLS returns the TLS configuration of a client of the server host
// (the default server name), or nil for a plain connection: TLS is on
// when secure (the address's scheme asks for it: mqtts://, amqps://,
// rediss://) or when a client TLS option is set. A caller whose address
// asks for a plain connection calls RejectTLS first.
//
// Files are read here, once: a table whose files are missing or malformed
// fails when it is created, with an error naming the option and the file.
func (o Options) ClientTLS(host string, secure bool) (*tls.Config, error) {
	if !secure && o.tlsOption() == "" {
		return nil, nil
	}
	for _, k := range TLSOptions() {
		if v, ok := o[k]; ok && strings.TrimSpace(v) == "" {
			return nil, fmt.Errorf("option '%s' must not be empty", k)
		}
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: strings.TrimSpace(o[TLSServerNameOption])}
	if cfg.ServerName == "" {
		cfg.ServerName = host
	}
	if ip := net.ParseIP(strings.Trim(cfg.ServerName, "[]")); ip != nil {
		cfg.ServerName = ip.String() // checked against the certificate's IP addresses
	}
	var err error
	if cfg.InsecureSkipVerify, err = o.Bool(TLSInsecureSkipVerifyOption, false); err != nil {
		return nil, err
	}
	if path, ok := o[TLSCAFileOption]; ok {
		if cfg.RootCAs, err = loadCAs(path); err != nil {
			return nil, fmt.Errorf("option '%s': %w", TLSCAFileOption, err)
		}
	}
	certPath, hasCert := o[TLSCertFileOption]
	keyPath, hasKey := o[TLSKeyFileOption]
	switch {
	case hasCert && !hasKey:
		return nil, fmt.Errorf("option '%s' needs '%s', the client certificate's private key", TLSCertFileOption, TLSKeyFileOption)
	case hasKey && !hasCert:
		return nil, fmt.Errorf("option '%s' needs '%s', the client certificate", TLSKeyFileOption, TLSCertFileOption)
	case hasCert:
		pair, err := loadPair(certPath, keyPath)
		if err != nil {
			return nil, err
		}
		// Sent whatever CAs the server says it takes, as OpenSSL's
		// clients do: crypto/tls would send none when the server's list
		// does not name the certificate's issuer, and the server's
		// refusal would then say a certificate is missing, not wrong.
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &pair, nil }
	}
	return cfg, nil
}

// loadCAs reads a PEM file of CA certificates.
func loadCAs(path string) (*x509.CertPool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the CA certificates: %w", err)
	}
	pool := x509.NewCertPool()
	n := 0
	var other []string
	for rest := data; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			other = append(other, b.Type)
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%s: certificate %d: %w", path, n+1, err)
		}
		pool.AddCert(c)
		n++
	}
	if n == 0 {
		if len(other) > 0 {
			return nil, fmt.Errorf("%s holds no PEM certificate (only %s)", path, strings.Join(other, ", "))
		}
		return nil, fmt.Errorf("%s holds no PEM certificate", path)
	}
	return pool, nil
}

// loadPair reads a client certificate and its key.
func loadPair(certPath, keyPath string) (tls.Certificate, error) {
	certPEM, err := os.ReadFile(certPath)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("option '%s': cannot read the client certificate: %w", TLSCertFileOption, err)
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("option '%s': cannot read the client key: %w", TLSKeyFileOption, err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		// The library's errors say which input was wrong ("certificate
		// input", "private key"), not which file it came from.
		return tls.Certificate{}, fmt.Errorf("options '%s' (%s) and '%s' (%s): %w", TLSCertFileOption, certPath, TLSKeyFileOption, keyPath, err)
	}
	return pair, nil
}

// TLSError is a TLS handshake that connecting again will not mend: the
// server's certificate failed the client's checks, or the server refused
// the client's certificate (or its absence). Connectors fail at once on
// it rather than trying again until their connect timeout.
type TLSError struct {
	Err  error
	hint string
}

func (e *TLSError) Error() string {
	if e.hint == "" {
		return e.Err.Error()
	}
	return e.Err.Error() + " (" + e.hint + ")"
}

func (e *TLSError) Unwrap() error { return e.Err }

// refusalAlerts are the TLS alerts of a server that refused the client's
// certificate, as crypto/tls words them.
var refusalAlerts = []string{
	"bad certificate", "unsupported certificate", "certificate revoked", "certificate expired",
	"certificate unknown", "unknown certificate authority", "access denied",
}

// ClassifyTLS returns err as a *TLSError, with a hint at the options to
// check, when it is a certificate that failed verification on either
// side; any other error (nil included) as it is.
func ClassifyTLS(err error) error {
	var te *TLSError
	if err == nil || errors.As(err, &te) {
		return err
	}
	var ve *tls.CertificateVerificationError
	if errors.As(err, &ve) {
		var ua x509.UnknownAuthorityError
		var he x509.HostnameError
		hint := ""
		switch {
		case errors.As(err, &ua):
			hint = fmt.Sprintf("the server's certificate is signed by no CA of '%s', or of the system without it", TLSCAFileOption)
		case errors.As(err, &he):
			hint = fmt.Sprintf("connect by a name the server's certificate has, or set '%s' to one", TLSServerNameOption)
		}
		return &TLSError{Err: err, hint: hint}
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "remote error" && oe.Err != nil {
		msg := oe.Err.Error()
		if strings.HasSuffix(msg, "certificate required") {
			return &TLSError{Err: err, hint: fmt.Sprintf("the server asks for a client certificate: set '%s' and '%s'", TLSCertFileOption, TLSKeyFileOption)}
		}
		for _, a := range refusalAlerts {
			if strings.HasSuffix(msg, a) {
				return &TLSError{Err: err, hint: fmt.Sprintf("the server refused the client's certificate, or its absence: check '%s' and '%s' against the CAs the server trusts", TLSCertFileOption, TLSKeyFileOption)}
			}
		}
	}
	return err
}
