package connector

import (
	"testing"
	"time"
)

// TestReconnectBackoff reads 'reconnect.initial-backoff' and
// 'reconnect.max-backoff': their defaults, their notations, and an error
// naming the option and the value for each bad one.
func TestReconnectBackoff(t *testing.T) {
	for _, c := range []struct {
		opts Options
		want Backoff
		err  string
	}{
		{Options{}, Backoff{100 * time.Millisecond, 30 * time.Second}, ""},
		{Options{"reconnect.initial-backoff": "10 ms", "reconnect.max-backoff": "1 min"}, Backoff{10 * time.Millisecond, time.Minute}, ""},
		{Options{"reconnect.initial-backoff": "2s", "reconnect.max-backoff": "2s"}, Backoff{2 * time.Second, 2 * time.Second}, ""},
		{Options{"reconnect.max-backoff": "250"}, Backoff{100 * time.Millisecond, 250 * time.Millisecond}, ""},
		{Options{"reconnect.initial-backoff": "soon"}, Backoff{}, `option 'reconnect.initial-backoff': cannot parse duration "soon"`},
		{Options{"reconnect.max-backoff": "5 fortnights"}, Backoff{}, `option 'reconnect.max-backoff': cannot parse duration "5 fortnights": unknown unit "fortnights"`},
		{Options{"reconnect.initial-backoff": "0 s"}, Backoff{}, "options 'reconnect.initial-backoff' (0s) and 'reconnect.max-backoff' (30s) must be positive, the first no larger"},
		{Options{"reconnect.initial-backoff": "-1s"}, Backoff{}, `option 'reconnect.initial-backoff': cannot parse duration "-1s": a duration cannot be negative`},
		{Options{"reconnect.initial-backoff": "-1 s"}, Backoff{}, `option 'reconnect.initial-backoff': cannot parse duration "-1 s": a duration cannot be negative`},
		{Options{"reconnect.initial-backoff": "1 min", "reconnect.max-backoff": "10 s"}, Backoff{}, "options 'reconnect.initial-backoff' (1m0s) and 'reconnect.max-backoff' (10s) must be positive, the first no larger"},
		{Options{"reconnect.max-backoff": "50 ms"}, Backoff{}, "options 'reconnect.initial-backoff' (100ms) and 'reconnect.max-backoff' (50ms) must be positive, the first no larger"},
	} {
		got, err := c.opts.ReconnectBackoff()
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%v: %v", c.opts, err)
		case c.err != "" && (err == nil || err.Error() != c.err):
			t.Errorf("%v: got error %v\nwant %s", c.opts, err, c.err)
		case got != c.want:
			t.Errorf("%v: got %+v, want %+v", c.opts, got, c.want)
		}
	}
}

// TestBackoff reads a pair of options of another name with other
// defaults, as the http sink's retries do.
func TestBackoff(t *testing.T) {
	def := Backoff{Initial: time.Second, Max: 30 * time.Second}
	b, err := Options{"sink.retry.max-backoff": "1 min"}.Backoff("sink.retry.initial-backoff", "sink.retry.max-backoff", def)
	if err != nil || b != (Backoff{time.Second, time.Minute}) {
		t.Errorf("got %+v, %v", b, err)
	}
	_, err = Options{"sink.retry.initial-backoff": "2 min"}.Backoff("sink.retry.initial-backoff", "sink.retry.max-backoff", def)
	if want := "options 'sink.retry.initial-backoff' (2m0s) and 'sink.retry.max-backoff' (30s) must be positive, the first no larger"; err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

// TestBackoffNext doubles the wait up to Max, and stays there.
func TestBackoffNext(t *testing.T) {
	b := Backoff{Initial: 100 * time.Millisecond, Max: time.Second}
	var got []time.Duration
	for d := b.Initial; len(got) < 6; d = b.Next(d) {
		got = append(got, d)
	}
	want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, time.Second, time.Second}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("waits %v, want %v", got, want)
		}
	}
}
