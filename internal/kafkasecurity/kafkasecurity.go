// Package kafkasecurity reads the security properties of Kafka's clients
// (security.protocol, sasl.* and ssl.*, with the names and meanings of
// Apache Kafka's Java client) into franz-go client options. The kafka
// connectors read them from a table's 'properties.*', the engine from
// 'state.kafka.properties.*' for its own clients (the state backend,
// cluster mode and its shuffle topics).
//
// TLS takes PEM stores only (ssl.truststore.type and ssl.keystore.type
// 'PEM'), from files or inline, with unencrypted private keys; JKS and
// PKCS12 stores, ssl.key.password and the other properties Go's TLS has
// no counterpart of are refused with an error that says what to write
// instead, rather than ignored: a TLS setting that silently does nothing
// is a connection that is less safe than its configuration says. The
// JVM's own tuning (ssl.provider, the key and trust manager algorithms,
// ssl.secure.random.implementation) and ssl.protocol are accepted and
// ignored.
//
// Files are read once, when the properties are parsed: a table whose
// files are missing or malformed fails when it is created, naming the
// property and the file.
package kafkasecurity

import (
	"crypto/tls"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/internal/suggest"
)

// The properties this package reads, without the prefix.
const (
	Protocol           = "security.protocol"
	TruststoreType     = "ssl.truststore.type"
	TruststoreLocation = "ssl.truststore.location"
	TruststoreCerts    = "ssl.truststore.certificates"
	TruststorePassword = "ssl.truststore.password"
	KeystoreType       = "ssl.keystore.type"
	KeystoreLocation   = "ssl.keystore.location"
	KeystoreChain      = "ssl.keystore.certificate.chain"
	KeystoreKey        = "ssl.keystore.key"
	KeystorePassword   = "ssl.keystore.password"
	KeyPassword        = "ssl.key.password"
	EndpointAlgorithm  = "ssl.endpoint.identification.algorithm"
	EnabledProtocols   = "ssl.enabled.protocols"
	CipherSuites       = "ssl.cipher.suites"
	EngineFactory      = "ssl.engine.factory.class"
)

// sslKeys are the ssl.* properties of Kafka's clients.
var sslKeys = []string{
	TruststoreType, TruststoreLocation, TruststoreCerts, TruststorePassword,
	KeystoreType, KeystoreLocation, KeystoreChain, KeystoreKey, KeystorePassword, KeyPassword,
	EndpointAlgorithm, EnabledProtocols, CipherSuites, EngineFactory,
	"ssl.protocol", "ssl.provider", "ssl.keymanager.algorithm", "ssl.trustmanager.algorithm",
	"ssl.secure.random.implementation",
}

// Security is what a set of client properties says of security.
type Security struct {
	// Opts are the client options: the TLS dialer and SASL.
	Opts []kgo.Opt
	// TLS is the dialer's TLS configuration, nil when TLS is off. Its
	// ServerName is empty: each broker is checked against the host it
	// is dialled by.
	TLS *tls.Config

	hints connector.TLSHints
}

// Classify returns err with a hint at the properties to check when it is
// a certificate that failed on either side (a *connector.TLSError, which
// trying again will not mend); any other error as it is.
func (s Security) Classify(err error) error {
	if s.TLS == nil {
		return err
	}
	return connector.ClassifyTLSWith(err, s.hints)
}

// Parse reads the security properties of p, whose keys are Kafka's
// ("security.protocol", "ssl.truststore.location"); prefix is what
// precedes them in the options they came from ("properties."), for
// messages.
func Parse(p map[string]string, prefix string) (Security, error) {
	r := reader{p: p, prefix: prefix}
	var s Security
	proto, set := p[Protocol]
	proto = strings.ToUpper(strings.TrimSpace(proto))
	if !set {
		proto = "PLAINTEXT"
	}
	useTLS := false
	switch proto {
	case "PLAINTEXT", "SASL_PLAINTEXT":
	case "SSL", "SASL_SSL":
		useTLS = true
	default:
		return s, fmt.Errorf("option '%s': unsupported value '%s' (expected PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL)", r.name(Protocol), p[Protocol])
	}
	var ssl []string
	for k := range p {
		if strings.HasPrefix(k, "ssl.") {
			ssl = append(ssl, k)
		}
	}
	sort.Strings(ssl) // the first error is the same on every run
	for _, k := range ssl {
		if !slices.Contains(sslKeys, k) {
			hint := ""
			if n := suggest.Nearest(k, sslKeys); n != "" {
				hint = fmt.Sprintf(" (did you mean '%s'?)", r.name(n))
			}
			return s, fmt.Errorf("option '%s' is not a TLS property of Kafka's clients%s", r.name(k), hint)
		}
	}
	if !useTLS && len(ssl) > 0 {
		is := "is not set (PLAINTEXT)"
		if set {
			is = fmt.Sprintf("is '%s'", p[Protocol])
		}
		return s, fmt.Errorf("option '%s' configures TLS, but '%s' %s, which does not use TLS: set it to 'SSL' (or 'SASL_SSL' with SASL)",
			r.name(ssl[0]), r.name(Protocol), is)
	}
	if useTLS {
		cfg, err := r.tlsConfig()
		if err != nil {
			return s, err
		}
		s.TLS = cfg
		s.Opts = append(s.Opts, kgo.DialTLSConfig(cfg))
		s.hints = r.hints()
	}
	if strings.HasPrefix(proto, "SASL_") {
		mech, err := r.sasl(proto)
		if err != nil {
			return s, err
		}
		s.Opts = append(s.Opts, mech)
	}
	return s, nil
}

// reader reads the properties p, named in messages with prefix.
type reader struct {
	p      map[string]string
	prefix string
}

func (r reader) name(key string) string { return r.prefix + key }

// value returns the property key trimmed, and whether it is set; an empty
// value is an error.
func (r reader) value(key string) (string, bool, error) {
	v, ok := r.p[key]
	if !ok {
		return "", false, nil
	}
	if v = strings.TrimSpace(v); v == "" {
		return "", true, fmt.Errorf("option '%s' must not be empty", r.name(key))
	}
	return v, true, nil
}

// storeType returns a store's type property, upper case, JKS (Kafka's
// default) when unset.
func (r reader) storeType(key string) (string, error) {
	t, ok, err := r.value(key)
	if err != nil || !ok {
		return "JKS", err
	}
	switch t = strings.ToUpper(t); t {
	case "PEM", "JKS", "PKCS12":
		return t, nil
	}
	return "", fmt.Errorf("option '%s': unsupported value '%s' (Sluice reads 'PEM' stores only)", r.name(key), r.p[key])
}

func (r reader) tlsConfig() (*tls.Config, error) {
	if _, ok := r.p[EngineFactory]; ok {
		return nil, fmt.Errorf("option '%s' names a Java class, which Sluice cannot load: use the PEM stores of '%s' and '%s'",
			r.name(EngineFactory), r.name(TruststoreLocation), r.name(KeystoreLocation))
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if err := r.versions(cfg); err != nil {
		return nil, err
	}
	if err := r.ciphers(cfg); err != nil {
		return nil, err
	}
	if err := r.truststore(cfg); err != nil {
		return nil, err
	}
	if err := r.keystore(cfg); err != nil {
		return nil, err
	}
	if alg, ok := r.p[EndpointAlgorithm]; ok {
		switch strings.ToLower(strings.TrimSpace(alg)) {
		case "https":
		case "":
			// Kafka's way of turning host name checks off: the
			// certificate must still chain to a trusted CA.
			connector.VerifyChainOnly(cfg)
		default:
			return nil, fmt.Errorf("option '%s': unsupported value '%s' (expected 'https', the default, or '' to check the brokers' certificates without their host names)",
				r.name(EndpointAlgorithm), alg)
		}
	}
	return cfg, nil
}

// truststore sets the CAs the brokers' certificates must chain to, as
// Kafka's DefaultSslEngineFactory reads them.
func (r reader) truststore(cfg *tls.Config) error {
	typ, err := r.storeType(TruststoreType)
	if err != nil {
		return err
	}
	loc, hasLoc, err := r.value(TruststoreLocation)
	if err != nil {
		return err
	}
	certs, hasCerts, err := r.value(TruststoreCerts)
	if err != nil {
		return err
	}
	_, hasPass := r.p[TruststorePassword]
	var in connector.PEM
	switch {
	case hasCerts && typ != "PEM":
		return fmt.Errorf("option '%s' needs '%s' = 'PEM'", r.name(TruststoreCerts), r.name(TruststoreType))
	case hasCerts && hasLoc:
		return fmt.Errorf("options '%s' and '%s' cannot both be set", r.name(TruststoreLocation), r.name(TruststoreCerts))
	case hasLoc && typ != "PEM":
		return fmt.Errorf("option '%s': Sluice reads PEM trust stores only, and '%s' is '%s'%s: "+
			"'keytool -list -rfc -keystore %s > ca.pem' writes the store's certificates as PEM; "+
			"then set '%s' = 'PEM' and '%s' to that file",
			r.name(TruststoreLocation), r.name(TruststoreType), typ, r.defaulted(TruststoreType), loc,
			r.name(TruststoreType), r.name(TruststoreLocation))
	case hasPass && (hasLoc || hasCerts):
		return fmt.Errorf("option '%s' cannot be set with a PEM trust store (as in Kafka's clients): remove it", r.name(TruststorePassword))
	case hasPass:
		return fmt.Errorf("option '%s' is set, but no trust store is", r.name(TruststorePassword))
	case hasCerts:
		in = connector.InlinePEM(r.name(TruststoreCerts), certs)
	case hasLoc:
		if in, err = connector.ReadPEMFile(r.name(TruststoreLocation), loc, "the trust store"); err != nil {
			return err
		}
	default:
		return nil // the system's CAs
	}
	cfg.RootCAs, err = in.CertPool()
	return err
}

// keystore sets the client certificate that brokers requiring one
// (ssl.client.auth=required) check, as Kafka's DefaultSslEngineFactory
// reads it.
func (r reader) keystore(cfg *tls.Config) error {
	typ, err := r.storeType(KeystoreType)
	if err != nil {
		return err
	}
	loc, hasLoc, err := r.value(KeystoreLocation)
	if err != nil {
		return err
	}
	chain, hasChain, err := r.value(KeystoreChain)
	if err != nil {
		return err
	}
	key, hasKey, err := r.value(KeystoreKey)
	if err != nil {
		return err
	}
	_, hasPass := r.p[KeystorePassword]
	switch {
	case hasKey && typ != "PEM":
		return fmt.Errorf("option '%s' needs '%s' = 'PEM'", r.name(KeystoreKey), r.name(KeystoreType))
	case hasKey && !hasChain:
		return fmt.Errorf("option '%s' needs '%s', the client certificate and the CAs between it and the broker's trust", r.name(KeystoreKey), r.name(KeystoreChain))
	case hasChain && !hasKey:
		return fmt.Errorf("option '%s' needs '%s', the client certificate's private key", r.name(KeystoreChain), r.name(KeystoreKey))
	case hasKey && hasLoc:
		return fmt.Errorf("options '%s' and '%s' cannot both be set", r.name(KeystoreLocation), r.name(KeystoreKey))
	case hasLoc && typ != "PEM":
		return fmt.Errorf("option '%s': Sluice reads PEM key stores only, and '%s' is '%s'%s: convert it with "+
			"'keytool -importkeystore -srckeystore %s -destkeystore keystore.p12 -deststoretype PKCS12' (a JKS store) and "+
			"'openssl pkcs12 -in keystore.p12 -nodes -out keystore.pem', which writes the certificate chain and the unencrypted key in one file; "+
			"then set '%s' = 'PEM' and '%s' to that file, readable by Sluice's user only",
			r.name(KeystoreLocation), r.name(KeystoreType), typ, r.defaulted(KeystoreType), loc,
			r.name(KeystoreType), r.name(KeystoreLocation))
	case hasPass && (hasLoc || hasKey):
		return fmt.Errorf("option '%s' cannot be set with a PEM key store (as in Kafka's clients): remove it", r.name(KeystorePassword))
	case hasPass:
		return fmt.Errorf("option '%s' is set, but no key store is", r.name(KeystorePassword))
	}
	if _, ok := r.p[KeyPassword]; ok {
		return fmt.Errorf("option '%s': Sluice cannot read encrypted private keys: write the key unencrypted with "+
			"'openssl pkey -in key.pem -out key-unencrypted.pem' (readable by Sluice's user only) and remove '%s'",
			r.name(KeyPassword), r.name(KeyPassword))
	}
	var certIn, keyIn connector.PEM
	switch {
	case hasKey:
		certIn, keyIn = connector.InlinePEM(r.name(KeystoreChain), chain), connector.InlinePEM(r.name(KeystoreKey), key)
	case hasLoc:
		if certIn, err = connector.ReadPEMFile(r.name(KeystoreLocation), loc, "the key store"); err != nil {
			return err
		}
		keyIn = certIn
	default:
		return nil // no client certificate
	}
	pair, err := connector.KeyPair(certIn, keyIn)
	if err != nil {
		return err
	}
	connector.SetClientCertificate(cfg, pair)
	return nil
}

// defaulted says that a store type was not set, for messages.
func (r reader) defaulted(key string) string {
	if _, ok := r.p[key]; ok {
		return ""
	}
	return " (Kafka's default when it is not set)"
}

// versions reads ssl.enabled.protocols into the least and greatest TLS
// versions spoken.
func (r reader) versions(cfg *tls.Config) error {
	v, ok, err := r.value(EnabledProtocols)
	if err != nil || !ok {
		return err
	}
	cfg.MinVersion, cfg.MaxVersion = 0, 0
	for _, s := range strings.Split(v, ",") {
		var ver uint16
		switch strings.TrimSpace(s) {
		case "TLSv1.2":
			ver = tls.VersionTLS12
		case "TLSv1.3":
			ver = tls.VersionTLS13
		case "TLSv1", "TLSv1.1", "SSLv3":
			continue // older than Sluice speaks
		default:
			return fmt.Errorf("option '%s': unknown protocol '%s' (expected TLSv1.2 or TLSv1.3)", r.name(EnabledProtocols), strings.TrimSpace(s))
		}
		if cfg.MinVersion == 0 || ver < cfg.MinVersion {
			cfg.MinVersion = ver
		}
		cfg.MaxVersion = max(cfg.MaxVersion, ver)
	}
	if cfg.MinVersion == 0 {
		return fmt.Errorf("option '%s' = '%s' enables no protocol Sluice speaks (TLSv1.2, TLSv1.3)", r.name(EnabledProtocols), v)
	}
	return nil
}

// ciphers reads ssl.cipher.suites, IANA names as the JVM writes them,
// into the TLS 1.2 cipher suites offered (TLS 1.3's are always on in Go).
func (r reader) ciphers(cfg *tls.Config) error {
	v, ok, err := r.value(CipherSuites)
	if err != nil || !ok {
		return err
	}
	ids := map[string]uint16{}
	for _, c := range tls.CipherSuites() {
		ids[c.Name] = c.ID
	}
	tls13 := map[string]bool{"TLS_AES_128_GCM_SHA256": true, "TLS_AES_256_GCM_SHA384": true, "TLS_CHACHA20_POLY1305_SHA256": true}
	for _, s := range strings.Split(v, ",") {
		name := strings.TrimSpace(s)
		switch id, ok := ids[name]; {
		case ok && !tls13[name]:
			cfg.CipherSuites = append(cfg.CipherSuites, id)
		case tls13[name]:
		case name == "":
		default:
			return fmt.Errorf("option '%s': cipher suite '%s' is unknown or not secure (Sluice offers those of Go's crypto/tls.CipherSuites)", r.name(CipherSuites), name)
		}
	}
	return nil
}

// hints name the properties to check when a certificate fails.
func (r reader) hints() connector.TLSHints {
	return connector.TLSHints{
		UnknownCA: fmt.Sprintf("the broker's certificate is signed by no CA of '%s' (or '%s'), or of the system without them",
			r.name(TruststoreLocation), r.name(TruststoreCerts)),
		Hostname: fmt.Sprintf("the broker's certificate is not for the address the client dialled (a bootstrap server, or the address the broker advertises): "+
			"dial a name it has, or set '%s' = '' to check its CA only", r.name(EndpointAlgorithm)),
		CertRequired: fmt.Sprintf("the broker asks for a client certificate: set '%s' = 'PEM' with '%s' (or '%s' and '%s')",
			r.name(KeystoreType), r.name(KeystoreLocation), r.name(KeystoreChain), r.name(KeystoreKey)),
		Refused: fmt.Sprintf("the broker refused the client's certificate, or its absence: check '%s' (or '%s') against the CAs the broker trusts",
			r.name(KeystoreLocation), r.name(KeystoreChain)),
	}
}

var jaasField = regexp.MustCompile(`(username|password)\s*=\s*"((?:[^"\\]|\\.)*)"`)

// sasl reads 'sasl.mechanism' and the credentials of 'sasl.jaas.config'.
func (r reader) sasl(proto string) (kgo.Opt, error) {
	var user, pass string
	for _, m := range jaasField.FindAllStringSubmatch(r.p["sasl.jaas.config"], -1) {
		val := strings.ReplaceAll(strings.ReplaceAll(m[2], `\"`, `"`), `\\`, `\`)
		if m[1] == "username" {
			user = val
		} else {
			pass = val
		}
	}
	if user == "" {
		return nil, fmt.Errorf("option '%s' must set username=\"...\" and password=\"...\" for security.protocol %s", r.name("sasl.jaas.config"), proto)
	}
	switch mech := strings.ToUpper(strings.TrimSpace(r.p["sasl.mechanism"])); mech {
	case "", "PLAIN":
		return kgo.SASL(plain.Auth{User: user, Pass: pass}.AsMechanism()), nil
	case "SCRAM-SHA-256":
		return kgo.SASL(scram.Auth{User: user, Pass: pass}.AsSha256Mechanism()), nil
	case "SCRAM-SHA-512":
		return kgo.SASL(scram.Auth{User: user, Pass: pass}.AsSha512Mechanism()), nil
	default:
		return nil, fmt.Errorf("option '%s': unsupported value '%s' (expected PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512)", r.name("sasl.mechanism"), mech)
	}
}
