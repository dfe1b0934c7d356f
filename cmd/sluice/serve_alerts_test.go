package main

import (
	"io"
	"os"
	"testing"
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
