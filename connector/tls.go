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
		cas, err := ReadPEMFile(TLSCAFileOption, path, "the CA certificates")
		if err != nil {
			return nil, err
		}
		if cfg.RootCAs, err = cas.CertPool(); err != nil {
			return nil, err
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
		cert, err := ReadPEMFile(TLSCertFileOption, certPath, "the client certificate")
		if err != nil {
			return nil, err
		}
		key, err := ReadPEMFile(TLSKeyFileOption, keyPath, "the client key")
		if err != nil {
			return nil, err
		}
		pair, err := KeyPair(cert, key)
		if err != nil {
			return nil, err
		}
		SetClientCertificate(cfg, pair)
	}
	return cfg, nil
}

// PEM is PEM text of a TLS configuration: CA certificates, a client
// certificate's chain or its private key, read from a file or given
// inline in an option. Its methods' errors name the option and the file.
type PEM struct {
	// Option is the option that gives the text or names its file.
	Option string
	// Path is the file the text was read from; "" when given inline.
	Path string
	Data []byte
}

// ReadPEMFile reads the file path that option names; what says what it
// holds ("the CA certificates"), for the error.
func ReadPEMFile(option, path, what string) (PEM, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return PEM{}, fmt.Errorf("option '%s': cannot read %s: %w", option, what, err)
	}
	return PEM{Option: option, Path: path, Data: data}, nil
}

// InlinePEM is the PEM text given as the value of option.
func InlinePEM(option, text string) PEM {
	return PEM{Option: option, Data: []byte(text)}
}

// source names p in messages: "option 'x': path" or "option 'x'".
func (p PEM) source() string {
	if p.Path == "" {
		return fmt.Sprintf("option '%s'", p.Option)
	}
	return fmt.Sprintf("option '%s': %s", p.Option, p.Path)
}

// CertPool returns the certificates of p, which must hold at least one.
func (p PEM) CertPool() (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	n := 0
	var other []string
	for rest := p.Data; ; {
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
			return nil, fmt.Errorf("%s: certificate %d: %w", p.source(), n+1, err)
		}
		pool.AddCert(c)
		n++
	}
	if n == 0 {
		if len(other) > 0 {
			return nil, fmt.Errorf("%s holds no PEM certificate (only %s)", p.source(), strings.Join(other, ", "))
		}
		return nil, fmt.Errorf("%s holds no PEM certificate", p.source())
	}
	return pool, nil
}

// KeyPair returns the client certificate whose chain cert holds and
// whose private key key holds; they may be the same PEM (one file with
// both, as Kafka's PEM key stores are). An encrypted key is refused,
// saying how to write it unencrypted.
func KeyPair(cert, key PEM) (tls.Certificate, error) {
	same := cert.Option == key.Option && cert.Path == key.Path
	if kind := encryptedKey(key.Data); kind != "" {
		return tls.Certificate{}, fmt.Errorf("%s: the private key is encrypted (%s), which Sluice cannot read: "+
			"write it unencrypted with 'openssl pkey -in key.pem -out key-unencrypted.pem' and let only Sluice's user read that file", key.source(), kind)
	}
	pair, err := tls.X509KeyPair(cert.Data, key.Data)
	if err != nil {
		// The library's errors say which input was wrong ("certificate
		// input", "private key"), not which option or file it came from.
		switch {
		case same:
			return tls.Certificate{}, fmt.Errorf("%s: %w", cert.source(), err)
		case cert.Path != "" && key.Path != "":
			return tls.Certificate{}, fmt.Errorf("options '%s' (%s) and '%s' (%s): %w", cert.Option, cert.Path, key.Option, key.Path, err)
		}
		return tls.Certificate{}, fmt.Errorf("options '%s' and '%s': %w", cert.Option, key.Option, err)
	}
	return pair, nil
}

// encryptedKey returns the kind of the first encrypted private key in
// data: a PKCS#8 "ENCRYPTED PRIVATE KEY", or an OpenSSL-style key with
// a "Proc-Type: 4,ENCRYPTED" header; "" when there is none.
func encryptedKey(data []byte) string {
	for rest := data; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			return ""
		}
		switch {
		case b.Type == "ENCRYPTED PRIVATE KEY":
			return b.Type
		case strings.HasSuffix(b.Type, "PRIVATE KEY") && strings.Contains(b.Headers["Proc-Type"], "ENCRYPTED"):
			return b.Type + " with Proc-Type ENCRYPTED"
		}
	}
}

// SetClientCertificate makes cfg send pair whenever the server asks for
// a client certificate.
func SetClientCertificate(cfg *tls.Config, pair tls.Certificate) {
	// Sent whatever CAs the server says it takes, as OpenSSL's clients
	// do: crypto/tls would send none when the server's list does not
	// name the certificate's issuer, and the server's refusal would then
	// say a certificate is missing, not wrong.
	cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &pair, nil }
}

// VerifyChainOnly makes cfg check that the server's certificate chains to
// cfg.RootCAs (the system's CAs when nil), as it does by default, but not
// which host names it is for, as Kafka's clients do when
// 'ssl.endpoint.identification.algorithm' is empty. A chain that fails
// is a *tls.CertificateVerificationError, as in a full check.
func VerifyChainOnly(cfg *tls.Config) {
	cfg.InsecureSkipVerify = true // the check below replaces crypto/tls's
	cfg.VerifyConnection = func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("tls: the server sent no certificate")
		}
		inter := x509.NewCertPool()
		for _, c := range cs.PeerCertificates[1:] {
			inter.AddCert(c)
		}
		_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: cfg.RootCAs, Intermediates: inter})
		if err != nil {
			return &tls.CertificateVerificationError{UnverifiedCertificates: cs.PeerCertificates, Err: err}
		}
		return nil
	}
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

// TLSHints are the hints ClassifyTLSWith adds to a certificate that
// failed, each naming the options to check.
type TLSHints struct {
	// UnknownCA: the server's certificate is signed by no CA the client
	// trusts.
	UnknownCA string
	// Hostname: the server's certificate is not for the name the client
	// connected to.
	Hostname string
	// CertRequired: the server asks for a client certificate and got
	// none.
	CertRequired string
	// Refused: the server refused the client's certificate (or its
	// absence).
	Refused string
}

// tlsOptionHints are the hints of the tls.* options.
var tlsOptionHints = TLSHints{
	UnknownCA:    fmt.Sprintf("the server's certificate is signed by no CA of '%s', or of the system without it", TLSCAFileOption),
	Hostname:     fmt.Sprintf("connect by a name the server's certificate has, or set '%s' to one", TLSServerNameOption),
	CertRequired: fmt.Sprintf("the server asks for a client certificate: set '%s' and '%s'", TLSCertFileOption, TLSKeyFileOption),
	Refused:      fmt.Sprintf("the server refused the client's certificate, or its absence: check '%s' and '%s' against the CAs the server trusts", TLSCertFileOption, TLSKeyFileOption),
}

// ClassifyTLS returns err as a *TLSError, with a hint at the tls.*
// options to check, when it is a certificate that failed verification on
// either side; any other error (nil included) as it is.
func ClassifyTLS(err error) error { return ClassifyTLSWith(err, tlsOptionHints) }

// ClassifyTLSWith is ClassifyTLS for a client whose TLS options are not
// the tls.* options (Kafka's ssl.* properties): hints name them.
func ClassifyTLSWith(err error, hints TLSHints) error {
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
			hint = hints.UnknownCA
		case errors.As(err, &he):
			hint = hints.Hostname
		}
		return &TLSError{Err: err, hint: hint}
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "remote error" && oe.Err != nil {
		msg := oe.Err.Error()
		if strings.HasSuffix(msg, "certificate required") {
			return &TLSError{Err: err, hint: hints.CertRequired}
		}
		for _, a := range refusalAlerts {
			if strings.HasSuffix(msg, a) {
				return &TLSError{Err: err, hint: hints.Refused}
			}
		}
	}
	return err
}
