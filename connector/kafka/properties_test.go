package kafka

import (
	"strings"
	"testing"

	"github.com/sluicesql/sluice/connector"
)

// A number of milliseconds beyond Kafka's own range (an int) is an error,
// not a duration that wraps around to a negative one.
func TestPropertiesMillisecondsBounded(t *testing.T) {
	for _, key := range []string{"linger.ms", "fetch.max.wait.ms"} {
		if _, err := parseProperties(map[string]string{key: "2147483647"}); err != nil {
			t.Errorf("%s = 2147483647: %v", key, err)
		}
		_, err := parseProperties(map[string]string{key: "9223372036854775807"})
		if err == nil || !strings.Contains(err.Error(), "'properties."+key+"'") || !strings.Contains(err.Error(), "2147483647") {
			t.Errorf("%s = 9223372036854775807: got %v, want an error naming the option and its range", key, err)
		}
	}
}

// A table's TLS properties are checked when it is created, named with
// their 'properties.' prefix (internal/kafkasecurity lists the cases).
func TestPropertiesTLSErrors(t *testing.T) {
	for _, c := range []struct {
		opts connector.Options
		want string
	}{
		{connector.Options{"properties.security.protocol": "SSL", "properties.ssl.truststore.location": "/etc/kafka/truststore.jks"},
			"option 'properties.ssl.truststore.location': Sluice reads PEM trust stores only, and 'properties.ssl.truststore.type' is 'JKS' (Kafka's default when it is not set): 'keytool -list -rfc"},
		{connector.Options{"properties.ssl.truststore.type": "PEM"},
			"option 'properties.ssl.truststore.type' configures TLS, but 'properties.security.protocol' is not set (PLAINTEXT)"},
	} {
		for _, kind := range []string{"source", "sink"} {
			// The broker is never dialled: the options fail first.
			err := openErr(t, tableWith("127.0.0.1:1", c.opts), kind)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s %v: got %v\nwant %s", kind, c.opts, err, c.want)
			}
		}
	}
}
