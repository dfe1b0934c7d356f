package connector

import (
	"strings"
	"testing"
	"time"
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

// TestPositiveDuration refuses a duration that is not above zero, and
// one that does not parse, naming the option.
func TestPositiveDuration(t *testing.T) {
	for _, c := range []struct {
		opts Options
		want time.Duration
		err  string
	}{
		{Options{}, 30 * time.Second, ""},
		{Options{"connect.timeout": "500 ms"}, 500 * time.Millisecond, ""},
		{Options{"connect.timeout": "0"}, 0, "option 'connect.timeout' must be positive"},
		{Options{"connect.timeout": "-2s"}, 0, `option 'connect.timeout': cannot parse duration "-2s": a duration cannot be negative`},
		{Options{"connect.timeout": "-2 s"}, 0, `option 'connect.timeout': cannot parse duration "-2 s": a duration cannot be negative`},
		{Options{"connect.timeout": "a while"}, 0, `option 'connect.timeout': cannot parse duration "a while"`},
	} {
		d, err := c.opts.PositiveDuration("connect.timeout", 30*time.Second)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%v: got %v, %v; want error %s", c.opts, d, err, c.err)
			}
		} else if err != nil || d != c.want {
			t.Errorf("%v: got %v, %v; want %v", c.opts, d, err, c.want)
		}
	}
}

func TestHasPrefix(t *testing.T) {
	o := Options{"connector": "mqtt", "sink.retained": "true"}
	if !o.HasPrefix("sink.") || o.HasPrefix("scan.") || (Options{}).HasPrefix("") {
		t.Errorf("HasPrefix of %v", o)
	}
}
