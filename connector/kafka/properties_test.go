package kafka

import (
	"strings"
	"testing"
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
