package main

import (
	"io"
	"os"
	"testing"
	"time"
)

// --allow-remote-webhooks (bare, or =false) and its environment variable
// reach the server's configuration; a bad value is refused.
func TestServeAllowRemoteWebhooks(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  string
		want bool
	}{
		{[]string{"--data-dir", "d"}, "", false},
		{[]string{"--data-dir", "d", "--allow-remote-webhooks"}, "", true},
		{[]string{"--data-dir", "d", "--allow-remote-webhooks=false"}, "true", false},
		{[]string{"--data-dir", "d"}, "true", true},
	} {
		t.Setenv("SLUICE_ALLOW_REMOTE_WEBHOOKS", c.env) // restored after the test
		if c.env == "" {
			os.Unsetenv("SLUICE_ALLOW_REMOTE_WEBHOOKS")
		}
		serve, _ := newServe(io.Discard, io.Discard)
		if err := serve.Flags().Parse(c.args); err != nil {
			t.Fatal(err)
		}
		get, err := serveConfig(serve.Flags(), "")
		if err != nil {
			t.Fatal(err)
		}
		cfg, _, _, err := buildServeConfig(get, io.Discard)
		if err != nil || cfg.AllowRemoteWebhooks != c.want {
			t.Errorf("%v, env %q: AllowRemoteWebhooks %v (%v), want %v", c.args, c.env, cfg.AllowRemoteWebhooks, err, c.want)
		}
	}
	t.Setenv("SLUICE_ALLOW_REMOTE_WEBHOOKS", "sometimes")
	serve, _ := newServe(io.Discard, io.Discard)
	serve.Flags().Parse([]string{"--data-dir", "d"})
	get, _ := serveConfig(serve.Flags(), "")
	if _, _, _, err := buildServeConfig(get, io.Discard); err == nil {
		t.Error("allow-remote-webhooks=sometimes was accepted")
	}
}

// --gateway-idle-timeout reaches the server's configuration; a bad value
// is refused.
func TestServeGatewayIdleTimeout(t *testing.T) {
	for _, c := range []struct {
		args []string
		want time.Duration
		ok   bool
	}{
		{[]string{"--data-dir", "d"}, 10 * time.Minute, true},
		{[]string{"--data-dir", "d", "--gateway-idle-timeout", "90s"}, 90 * time.Second, true},
		{[]string{"--data-dir", "d", "--gateway-idle-timeout", "0s"}, 0, false},
		{[]string{"--data-dir", "d", "--gateway-idle-timeout", "soon"}, 0, false},
	} {
		serve, _ := newServe(io.Discard, io.Discard)
		if err := serve.Flags().Parse(c.args); err != nil {
			t.Fatal(err)
		}
		get, err := serveConfig(serve.Flags(), "")
		if err != nil {
			t.Fatal(err)
		}
		cfg, _, _, err := buildServeConfig(get, io.Discard)
		if (err == nil) != c.ok || c.ok && cfg.GatewayIdleTimeout != c.want {
			t.Errorf("%v: GatewayIdleTimeout %v (%v), want %v (ok %v)", c.args, cfg.GatewayIdleTimeout, err, c.want, c.ok)
		}
	}
}

// --metric-store-memory reaches the server's configuration; a bad value
// is refused.
func TestServeMetricStoreMemory(t *testing.T) {
	for _, c := range []struct {
		args []string
		want int64
		ok   bool
	}{
		{[]string{"--data-dir", "d"}, 256 << 20, true},
		{[]string{"--data-dir", "d", "--metric-store-memory", "2gb"}, 2 << 30, true},
		{[]string{"--data-dir", "d", "--metric-store-memory", "0"}, 0, false},
		{[]string{"--data-dir", "d", "--metric-store-memory", "lots"}, 0, false},
	} {
		serve, _ := newServe(io.Discard, io.Discard)
		if err := serve.Flags().Parse(c.args); err != nil {
			t.Fatal(err)
		}
		get, err := serveConfig(serve.Flags(), "")
		if err != nil {
			t.Fatal(err)
		}
		cfg, _, _, err := buildServeConfig(get, io.Discard)
		if (err == nil) != c.ok || c.ok && cfg.MetricStoreMemory != c.want {
			t.Errorf("%v: MetricStoreMemory %d (%v), want %d (ok %v)", c.args, cfg.MetricStoreMemory, err, c.want, c.ok)
		}
	}
}
