package kafkasecurity

import (
	"crypto/tls"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicesql/sluice/internal/tlstest"
)

// TestParse lists property sets beside the error each gets, or "" for a
// valid one. Keys are written without the "properties." prefix that the
// messages give them.
func TestParse(t *testing.T) {
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
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	certPEM, keyPEM := read(client.CertFile), read(client.KeyFile)
	keystore := write("keystore.pem", certPEM+keyPEM)
	block, _ := pem.Decode([]byte(keyPEM))
	encrypted := write("encrypted.pem", certPEM+string(pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: block.Bytes})))
	certOnly := write("cert.pem", certPEM)
	// As 'keytool -list -rfc' and 'openssl pkcs12 -nodes' write them:
	// text around the PEM blocks, the key first.
	keytoolList := write("keytool.pem", "Keystore type: PKCS12\n\nAlias name: ca\nCreation date: Jan 1, 2026\n"+read(ca.CertFile)+"\n*******\n")
	opensslOut := write("openssl.pem", "Bag Attributes\n    localKeyID: 01\nKey Attributes: <No Attributes>\n"+keyPEM+
		"Bag Attributes\n    localKeyID: 01\nsubject=CN = c\nissuer=CN = ca\n"+certPEM)
	missing := filepath.Join(dir, "missing.pem")

	ssl := func(kv ...string) map[string]string {
		m := map[string]string{"security.protocol": "SSL"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, c := range []struct {
		props map[string]string
		want  string
	}{
		// Valid.
		{map[string]string{}, ""},
		{ssl(), ""},
		{ssl("ssl.truststore.type", "PEM", "ssl.truststore.location", ca.CertFile), ""},
		{ssl("ssl.truststore.type", "pem", "ssl.truststore.certificates", read(ca.CertFile)), ""},
		{ssl("ssl.keystore.type", "PEM", "ssl.keystore.location", keystore), ""},
		{ssl("ssl.keystore.type", "PEM", "ssl.keystore.certificate.chain", certPEM, "ssl.keystore.key", keyPEM), ""},
		{ssl("ssl.truststore.type", "PEM", "ssl.truststore.location", keytoolList, "ssl.keystore.type", "PEM", "ssl.keystore.location", opensslOut), ""},
		{ssl("ssl.endpoint.identification.algorithm", ""), ""},
		{ssl("ssl.endpoint.identification.algorithm", "HTTPS"), ""},
		{ssl("ssl.enabled.protocols", "TLSv1.2,TLSv1.3", "ssl.protocol", "TLSv1.3", "ssl.provider", "SunJSSE"), ""},
		{ssl("ssl.cipher.suites", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, TLS_AES_128_GCM_SHA256"), ""},
		{map[string]string{"security.protocol": "SASL_SSL", "sasl.jaas.config": `x required username="u" password="p";`}, ""},

		// The protocol.
		{map[string]string{"security.protocol": "TLS"}, "option 'properties.security.protocol': unsupported value 'TLS' (expected PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL)"},
		{map[string]string{"ssl.truststore.location": ca.CertFile},
			"option 'properties.ssl.truststore.location' configures TLS, but 'properties.security.protocol' is not set (PLAINTEXT), which does not use TLS: set it to 'SSL' (or 'SASL_SSL' with SASL)"},
		{map[string]string{"security.protocol": "SASL_PLAINTEXT", "ssl.endpoint.identification.algorithm": ""},
			"but 'properties.security.protocol' is 'SASL_PLAINTEXT', which does not use TLS"},
		{ssl("ssl.truststore.locaton", ca.CertFile),
			"option 'properties.ssl.truststore.locaton' is not a TLS property of Kafka's clients (did you mean 'properties.ssl.truststore.location'?)"},
		{ssl("ssl.engine.factory.class", "com.example.Factory"), "names a Java class, which Sluice cannot load"},

		// The trust store.
		{ssl("ssl.truststore.location", "/etc/kafka/truststore.jks"),
			"option 'properties.ssl.truststore.location': Sluice reads PEM trust stores only, and 'properties.ssl.truststore.type' is 'JKS' (Kafka's default when it is not set): " +
				"'keytool -list -rfc -keystore /etc/kafka/truststore.jks > ca.pem' writes the store's certificates as PEM"},
		{ssl("ssl.truststore.type", "PKCS12", "ssl.truststore.location", "ts.p12"), "and 'properties.ssl.truststore.type' is 'PKCS12':"},
		{ssl("ssl.truststore.type", "BKS", "ssl.truststore.location", "ts.bks"), "option 'properties.ssl.truststore.type': unsupported value 'BKS' (Sluice reads 'PEM' stores only)"},
		{ssl("ssl.truststore.certificates", read(ca.CertFile)), "option 'properties.ssl.truststore.certificates' needs 'properties.ssl.truststore.type' = 'PEM'"},
		{ssl("ssl.truststore.type", "PEM", "ssl.truststore.location", ca.CertFile, "ssl.truststore.certificates", read(ca.CertFile)),
			"options 'properties.ssl.truststore.location' and 'properties.ssl.truststore.certificates' cannot both be set"},
		{ssl("ssl.truststore.type", "PEM", "ssl.truststore.location", ca.CertFile, "ssl.truststore.password", "x"),
			"option 'properties.ssl.truststore.password' cannot be set with a PEM trust store"},
		{ssl("ssl.truststore.type", "PEM", "ssl.truststore.location", missing),
			"option 'properties.ssl.truststore.location': cannot read the trust store: open " + missing},
		{ssl("ssl.truststore.type", "PEM", "ssl.truststore.location", ""), "option 'properties.ssl.truststore.location' must not be empty"},
		{ssl("ssl.truststore.type", "PEM", "ssl.truststore.location", client.KeyFile),
			"option 'properties.ssl.truststore.location': " + client.KeyFile + " holds no PEM certificate (only PRIVATE KEY)"},
		{ssl("ssl.truststore.type", "PEM", "ssl.truststore.certificates", "hello"), "option 'properties.ssl.truststore.certificates' holds no PEM certificate"},

		// The key store.
		{ssl("ssl.keystore.location", "/etc/kafka/client.jks", "ssl.keystore.password", "x", "ssl.key.password", "y"),
			"option 'properties.ssl.keystore.location': Sluice reads PEM key stores only, and 'properties.ssl.keystore.type' is 'JKS' (Kafka's default when it is not set): convert it with " +
				"'keytool -importkeystore -srckeystore /etc/kafka/client.jks -destkeystore keystore.p12 -deststoretype PKCS12' (a JKS store) and " +
				"'openssl pkcs12 -in keystore.p12 -nodes -out keystore.pem'"},
		{ssl("ssl.keystore.type", "PEM", "ssl.keystore.location", keystore, "ssl.keystore.password", "x"),
			"option 'properties.ssl.keystore.password' cannot be set with a PEM key store"},
		{ssl("ssl.keystore.type", "PEM", "ssl.keystore.location", keystore, "ssl.key.password", "x"),
			"option 'properties.ssl.key.password': Sluice cannot read encrypted private keys: write the key unencrypted with 'openssl pkey -in key.pem -out key-unencrypted.pem'"},
		{ssl("ssl.keystore.type", "PEM", "ssl.keystore.location", encrypted),
			"option 'properties.ssl.keystore.location': " + encrypted + ": the private key is encrypted (ENCRYPTED PRIVATE KEY), which Sluice cannot read: write it unencrypted with 'openssl pkey"},
		{ssl("ssl.keystore.type", "PEM", "ssl.keystore.location", certOnly),
			"option 'properties.ssl.keystore.location': " + certOnly + ": tls: found a certificate rather than a key in the PEM for the private key"},
		{ssl("ssl.keystore.type", "PEM", "ssl.keystore.certificate.chain", certPEM), "option 'properties.ssl.keystore.certificate.chain' needs 'properties.ssl.keystore.key'"},
		{ssl("ssl.keystore.type", "PEM", "ssl.keystore.key", keyPEM), "option 'properties.ssl.keystore.key' needs 'properties.ssl.keystore.certificate.chain'"},
		{ssl("ssl.keystore.certificate.chain", certPEM, "ssl.keystore.key", keyPEM), "option 'properties.ssl.keystore.key' needs 'properties.ssl.keystore.type' = 'PEM'"},
		{ssl("ssl.keystore.type", "PEM", "ssl.keystore.certificate.chain", certPEM, "ssl.keystore.key", read(tlstest.NewCA(t, "other").Client("o").KeyFile)),
			"options 'properties.ssl.keystore.certificate.chain' and 'properties.ssl.keystore.key': tls: private key does not match public key"},
		{ssl("ssl.keystore.type", "PEM", "ssl.keystore.location", keystore, "ssl.keystore.certificate.chain", certPEM, "ssl.keystore.key", keyPEM),
			"options 'properties.ssl.keystore.location' and 'properties.ssl.keystore.key' cannot both be set"},

		// The rest.
		{ssl("ssl.endpoint.identification.algorithm", "ldaps"), "option 'properties.ssl.endpoint.identification.algorithm': unsupported value 'ldaps'"},
		{ssl("ssl.enabled.protocols", "TLSv1.1"), "option 'properties.ssl.enabled.protocols' = 'TLSv1.1' enables no protocol Sluice speaks (TLSv1.2, TLSv1.3)"},
		{ssl("ssl.enabled.protocols", "TLSv1.4"), "unknown protocol 'TLSv1.4'"},
		{ssl("ssl.cipher.suites", "TLS_RSA_WITH_RC4_128_SHA"), "cipher suite 'TLS_RSA_WITH_RC4_128_SHA' is unknown or not secure"},
		{map[string]string{"security.protocol": "SASL_SSL"}, "option 'properties.sasl.jaas.config' must set username"},
	} {
		s, err := Parse(c.props, "properties.")
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v", c.props, err)
		case c.want == "" && (s.TLS == nil) != (c.props["security.protocol"] != "SSL" && c.props["security.protocol"] != "SASL_SSL"):
			t.Errorf("%v: TLS on = %v", c.props, s.TLS != nil)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: got %v\nwant %s", c.props, err, c.want)
		}
	}
}

// TestParseConfig checks the TLS configuration the properties give.
func TestParseConfig(t *testing.T) {
	ca := tlstest.NewCA(t, "ca")
	s, err := Parse(map[string]string{"security.protocol": "SSL"}, "properties.")
	if err != nil || s.TLS.MinVersion != tls.VersionTLS12 || s.TLS.RootCAs != nil || s.TLS.ServerName != "" || s.TLS.GetClientCertificate != nil || s.TLS.InsecureSkipVerify {
		t.Errorf("SSL alone: %+v, %v", s.TLS, err)
	}
	s, err = Parse(map[string]string{"security.protocol": "SSL", "ssl.enabled.protocols": "TLSv1.3",
		"ssl.truststore.type": "PEM", "ssl.truststore.location": ca.CertFile, "ssl.endpoint.identification.algorithm": ""}, "properties.")
	if err != nil || s.TLS.MinVersion != tls.VersionTLS13 || s.TLS.MaxVersion != tls.VersionTLS13 || s.TLS.RootCAs == nil ||
		!s.TLS.InsecureSkipVerify || s.TLS.VerifyConnection == nil {
		t.Errorf("TLS 1.3, no host name check: %+v, %v", s.TLS, err)
	}
	if _, err := Parse(map[string]string{"ssl.truststore.location": "x"}, "state.kafka.properties."); err == nil ||
		!strings.HasPrefix(err.Error(), "option 'state.kafka.properties.ssl.truststore.location' configures TLS, but 'state.kafka.properties.security.protocol'") {
		t.Errorf("prefix: %v", err)
	}
}
