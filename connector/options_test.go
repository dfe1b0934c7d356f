package connector

import (
	"strings"
	"testing"
)

// TestOptionsMaskSecrets: an option that names a secret is never quoted
// in the error about its value; other options are.
func TestOptionsMaskSecrets(t *testing.T) {
	o := Options{"password": "hunter2-pw", "properties.sasl.password": "hunter2-pw", "port": "eighty"}
	for _, err := range []error{
		func() error { _, err := o.Int("password", 0); return err }(),
		func() error { _, err := o.Float("properties.sasl.password", 0); return err }(),
		func() error { _, err := o.Bool("password", false); return err }(),
		func() error { _, err := o.Duration("password", 0); return err }(),
	} {
		if err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("error %v", err)
		}
	}
	if _, err := o.Int("port", 0); err == nil || !strings.Contains(err.Error(), `"eighty"`) {
		t.Errorf("error %v", err)
	}
}
