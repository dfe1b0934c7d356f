package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/sluicesql/sluice/internal/trim"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/server"
)

// serveSettings are the settings of `sluice serve`: each a flag, an
// environment variable SLUICE_<NAME> (upper case, '-' as '_') and a key
// of the config file, in that order of precedence.
var serveSettings = []struct{ name, def, usage string }{
	{"listen", "127.0.0.1:8081", "address to listen on (host:port)"},
	{"data-dir", "", "directory of the catalog, the jobs, their versions and state, and the API tokens (required)"},
	{"auth", "true", "require an API token (sluice token create) on every request but /healthz; off only on a loopback address"},
	{"tls-cert", "", "TLS certificate file (serve HTTPS, with --tls-key)"},
	{"tls-key", "", "TLS private key file"},
	{"log-format", "text", "log format: text or json"},
	{"log-level", "info", "log level: debug (every request), info, warn or error"},
	{"keep-versions", "20", "versions of a job's SQL kept"},
	{"stop-timeout", defaultStopTimeout.String(), "on SIGTERM or SIGINT, how long the jobs may take to stop with a final checkpoint before they are cancelled"},
	{"allow-remote-webhooks", "false", "let alert rules post to webhooks on any host (by default only to a loopback address)"},
	{"gateway-idle-timeout", "10m", "close a session of the Flink SQL gateway API after this long without a request"},
	{"metric-store-memory", "256mb", "memory for the metric groups' current values, beyond which the least recently written spill to DATA/metricstore"},
}

// newServe returns the commands serve and token.
func newServe(stdout, stderr io.Writer) (serve, token *cobra.Command) {
	var configFile string
	serve = &cobra.Command{
		Use:   "serve --data-dir DIR [--listen 127.0.0.1:8081] [--auth=true|false] [--tls-cert F --tls-key F] [--config FILE]",
		Short: "Run the server: jobs published as SQL over a REST API, kept across restarts",
		Long: `Serve runs Sluice as a service (docs/server.md): jobs are published to it as
SQL over a REST API (/v1/..., described at /openapi.json), kept in the data
directory and run again from their last checkpoint when the server starts
again, also after a crash. /metrics serves Prometheus metrics, /healthz a
health check. Clients of Flink's SQL gateway (its SQL client in gateway
mode, scripts) open sessions under /v2/sessions (docs/server.md).

Every setting is a flag, an environment variable (SLUICE_LISTEN,
SLUICE_DATA_DIR, SLUICE_AUTH, SLUICE_TLS_CERT, SLUICE_TLS_KEY, ...) and a
key of the optional --config file (SLUICE_CONFIG), which holds 'name =
value' lines or a JSON object, with the flags' names. A flag wins over the
environment, which wins over the file.

With auth on (the default), every request but /healthz needs
'Authorization: Bearer TOKEN'; create tokens with 'sluice token create'.
With auth off, the server listens only on a loopback address.

SIGTERM or SIGINT stops the jobs with a final checkpoint (within
--stop-timeout) and exits; the jobs that were running run again at the
next start.`,
		Example: `  sluice token create --data-dir ./data --name admin
  sluice serve --data-dir ./data`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fail := func(err error) error {
				fmt.Fprintln(stderr, "error:", err)
				return exitError{err}
			}
			get, err := serveConfig(cmd.Flags(), configFile)
			if err != nil {
				return fail(err)
			}
			cfg, listen, logger, err := buildServeConfig(get, stderr)
			if err != nil {
				return fail(err)
			}
			cfg.Stdout = stdout
			if err := server.CheckListen(listen, cfg.Auth); err != nil {
				return fail(err)
			}
			s, err := server.New(cfg)
			if err != nil {
				return fail(err)
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				s.Close()
				return fail(err)
			}
			scheme := "http"
			if cfg.TLSCertFile != "" {
				scheme = "https"
			}
			logger.Info("listening", "address", scheme+"://"+ln.Addr().String(), "data_dir", cfg.DataDir, "auth", cfg.Auth)
			// The server's start (the catalog, the state store, the
			// jobs it resumes) ran code it may not run again.
			trim.Startup()
			sigs := make(chan os.Signal, 2)
			signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
			defer signal.Stop(sigs)
			served := make(chan error, 1)
			go func() { served <- s.Serve(ln) }()
			select {
			case sig := <-sigs:
				logger.Info("stopping: the jobs stop with a final checkpoint and run again at the next start", "signal", name(sig))
				go func() {
					// A second signal exits at once: the jobs resume
					// from their last checkpoint.
					sig := <-sigs
					logger.Warn("exiting at once", "signal", name(sig))
					os.Exit(exitCode(sig))
				}()
				if err := s.Close(); err != nil {
					return fail(err)
				}
				<-served
				logger.Info("stopped")
				return nil
			case err := <-served:
				s.Close()
				if err != nil {
					return fail(err)
				}
				return nil
			}
		},
	}
	for _, st := range serveSettings {
		serve.Flags().String(st.name, st.def, st.usage+" [SLUICE_"+envName(st.name)+"]")
	}
	serve.Flags().Lookup("auth").NoOptDefVal = "true"
	serve.Flags().Lookup("allow-remote-webhooks").NoOptDefVal = "true"
	serve.Flags().StringVar(&configFile, "config", os.Getenv("SLUICE_CONFIG"), "config file: 'name = value' lines or a JSON object [SLUICE_CONFIG]")

	token = &cobra.Command{
		Use:   "token",
		Short: "Manage the server's API tokens",
		Args:  cobra.NoArgs,
	}
	var dataDir, tokenName string
	create := &cobra.Command{
		Use:   "create --data-dir DIR --name NAME",
		Short: "Create an API token and print it (once: the data directory keeps only its hash)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if dataDir == "" {
				dataDir = os.Getenv("SLUICE_DATA_DIR")
			}
			if dataDir == "" || tokenName == "" {
				err := fmt.Errorf("token create needs --data-dir and --name")
				fmt.Fprintln(stderr, "error:", err)
				return exitError{err}
			}
			t, err := server.CreateToken(dataDir, tokenName)
			if err != nil {
				fmt.Fprintln(stderr, "error:", err)
				return exitError{err}
			}
			fmt.Fprintln(stdout, t)
			return nil
		},
	}
	create.Flags().StringVar(&dataDir, "data-dir", "", "the server's data directory [SLUICE_DATA_DIR]")
	create.Flags().StringVar(&tokenName, "name", "", "the token's name (who or what uses it)")
	token.AddCommand(create)
	return serve, token
}

// envName is the environment variable suffix of a setting.
func envName(setting string) string {
	return strings.ToUpper(strings.ReplaceAll(setting, "-", "_"))
}

// serveConfig returns a function giving each setting's value: the flag's
// if given, else the environment's, else the config file's, else the
// default.
func serveConfig(flags *pflag.FlagSet, configFile string) (func(string) string, error) {
	file := map[string]string{}
	if configFile != "" {
		b, err := os.ReadFile(configFile)
		if err != nil {
			return nil, fmt.Errorf("--config: %w", err)
		}
		if file, err = parseConfigFile(b); err != nil {
			return nil, fmt.Errorf("--config %s: %w", configFile, err)
		}
		known := map[string]bool{}
		for _, st := range serveSettings {
			known[st.name] = true
		}
		for k := range file {
			if !known[k] {
				return nil, fmt.Errorf("--config %s: unknown setting %q", configFile, k)
			}
		}
	}
	return func(name string) string {
		if f := flags.Lookup(name); f.Changed {
			return f.Value.String()
		}
		if v, ok := os.LookupEnv("SLUICE_" + envName(name)); ok {
			return v
		}
		if v, ok := file[name]; ok {
			return v
		}
		return flags.Lookup(name).DefValue
	}, nil
}

// parseConfigFile reads 'name = value' lines ('#' comments, blank lines)
// or a JSON object.
func parseConfigFile(b []byte) (map[string]string, error) {
	out := map[string]string{}
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '{' {
		var m map[string]any
		if err := json.Unmarshal(t, &m); err != nil {
			return nil, err
		}
		for k, v := range m {
			switch v := v.(type) {
			case string:
				out[k] = v
			case bool, float64:
				out[k] = fmt.Sprint(v)
			default:
				return nil, fmt.Errorf("%s: expected a string, a number or a boolean", k)
			}
		}
		return out, nil
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("line %d: expected name = value", n)
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
			v = v[1 : len(v)-1]
		}
		out[strings.TrimSpace(k)] = v
	}
	return out, sc.Err()
}

// buildServeConfig turns the settings into the server's configuration,
// its listen address and its logger.
func buildServeConfig(get func(string) string, stderr io.Writer) (server.Config, string, *slog.Logger, error) {
	var cfg server.Config
	var level slog.Level
	if err := level.UnmarshalText([]byte(get("log-level"))); err != nil {
		return cfg, "", nil, fmt.Errorf("log-level %q: use debug, info, warn or error", get("log-level"))
	}
	opts := &slog.HandlerOptions{Level: level}
	var logger *slog.Logger
	switch f := get("log-format"); f {
	case "text":
		logger = slog.New(slog.NewTextHandler(stderr, opts))
	case "json":
		logger = slog.New(slog.NewJSONHandler(stderr, opts))
	default:
		return cfg, "", nil, fmt.Errorf("log-format %q: use text or json", f)
	}
	auth, err := strconv.ParseBool(get("auth"))
	if err != nil {
		return cfg, "", nil, fmt.Errorf("auth %q: use true or false", get("auth"))
	}
	keep, err := strconv.Atoi(get("keep-versions"))
	if err != nil || keep < 1 {
		return cfg, "", nil, fmt.Errorf("keep-versions %q: a positive number", get("keep-versions"))
	}
	stop, err := time.ParseDuration(get("stop-timeout"))
	if err != nil || stop <= 0 {
		return cfg, "", nil, fmt.Errorf("stop-timeout %q: a positive duration (10s)", get("stop-timeout"))
	}
	remoteHooks, err := strconv.ParseBool(get("allow-remote-webhooks"))
	if err != nil {
		return cfg, "", nil, fmt.Errorf("allow-remote-webhooks %q: use true or false", get("allow-remote-webhooks"))
	}
	idle, err := time.ParseDuration(get("gateway-idle-timeout"))
	if err != nil || idle <= 0 {
		return cfg, "", nil, fmt.Errorf("gateway-idle-timeout %q: a positive duration (10m)", get("gateway-idle-timeout"))
	}
	mem, err := connector.ParseMemorySize(get("metric-store-memory"))
	if err != nil || mem <= 0 {
		return cfg, "", nil, fmt.Errorf("metric-store-memory %q: a positive size (256mb)", get("metric-store-memory"))
	}
	cfg = server.Config{DataDir: get("data-dir"), Auth: auth, TLSCertFile: get("tls-cert"), TLSKeyFile: get("tls-key"),
		KeepVersions: keep, StopTimeout: stop, Logger: logger, AllowRemoteWebhooks: remoteHooks, GatewayIdleTimeout: idle,
		MetricStoreMemory: mem}
	if cfg.DataDir == "" {
		return cfg, "", nil, fmt.Errorf("no data directory: give --data-dir (or SLUICE_DATA_DIR)")
	}
	return cfg, get("listen"), logger, nil
}
