package http

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/connector/lookupcache"
	"github.com/sluicesql/sluice/connector/redact"
	"github.com/sluicesql/sluice/types"
)

// Factory builds the http connector's tables: dimension tables (lookup
// sources), push sources and sinks.
type Factory struct{}

// New returns the http connector factory.
func New() Factory { return Factory{} }

// Name implements connector.Factory.
func (Factory) Name() string { return "http" }

// Option keys.
const (
	optURL          = "url"
	optFormat       = "format"
	optTimeout      = "timeout"
	optMaxSize      = "max-response-size"
	optHeaderPrefix = "http.header."
)

// defaultMaxSize is the default of 'max-response-size'.
const defaultMaxSize = 256 << 20

// Source loads a table from a JSON array served over HTTP (a
// connector.FullSource).
type Source struct {
	name     string
	url      string
	shown    string   // url as messages quote it, its secrets masked
	secrets  []string // masked in every error: the url's, the headers'
	header   http.Header
	client   *http.Client
	schema   types.Schema
	format   format.Factory
	fmtOpts  map[string]string
	policy   *connector.ErrorPolicy
	reload   time.Duration
	maxSize  int64 // bytes a response may have
	identity string
}

// CreateLookup implements connector.LookupFactory.
func (Factory) CreateLookup(t connector.Table, env connector.Env) (connector.LookupSource, error) {
	s, err := newSource(t, env)
	if err != nil {
		return nil, redact.Error(err, redact.Secrets(t.Options)...)
	}
	return s, nil
}

func newSource(t connector.Table, env connector.Env) (*Source, error) {
	if err := connector.RejectMetadata("http", t); err != nil {
		return nil, err
	}
	known := append([]string{"connector", optURL, optFormat, optTimeout, optMaxSize,
		lookupcache.OptCache, lookupcache.OptReloadInterval, lookupcache.OptPeriodicReload, lookupcache.OptRefreshInterval},
		connector.ErrorPolicyOptions()...)
	if err := t.Options.CheckKnown("http", known, optHeaderPrefix, "json."); err != nil {
		return nil, err
	}
	s := &Source{name: t.Name, schema: t.Schema, header: http.Header{}, secrets: redact.Secrets(t.Options)}
	var err error
	if s.url, err = t.Options.Required(optURL); err != nil {
		return nil, fmt.Errorf("http: %w", err)
	}
	s.shown = redact.URL(s.url)
	u, err := url.Parse(s.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("http: option '%s': %q is not an http:// or https:// URL", optURL, s.shown)
	}
	if f := t.Options.String(optFormat, "json"); f != "json" {
		return nil, fmt.Errorf("http: option '%s': unsupported value '%s' (the response is a JSON array: 'json')", optFormat, f)
	}
	if env.Formats == nil {
		return nil, errors.New("http: no format registry")
	}
	if s.format, err = env.Formats.Lookup("json"); err != nil {
		return nil, err
	}
	s.fmtOpts = t.Options.WithPrefix("json.")
	if _, err := s.format.NewDecoder(t.Schema, s.fmtOpts); err != nil {
		return nil, err
	}
	if s.policy, err = connector.NewErrorPolicy(t, "json"); err != nil {
		return nil, err
	}
	if m, ok := t.Options[lookupcache.OptCache]; ok && !strings.EqualFold(strings.TrimSpace(m), "FULL") {
		return nil, fmt.Errorf("http: option '%s' = '%s' is not supported: the table is loaded in full ('FULL')", lookupcache.OptCache, m)
	}
	settings, err := lookupcache.ParseOptions(t.Options)
	if err != nil {
		return nil, err
	}
	s.reload = settings.ReloadInterval
	timeout, err := t.Options.Duration(optTimeout, 30*time.Second)
	if err != nil {
		return nil, err
	}
	s.client = &http.Client{Timeout: timeout}
	if s.maxSize, err = t.Options.MemorySize(optMaxSize, defaultMaxSize); err != nil {
		return nil, err
	}
	if s.maxSize <= 0 {
		return nil, fmt.Errorf("option '%s' must be a positive size (e.g. '256 mb'), got '%s'", optMaxSize, t.Options[optMaxSize])
	}
	for k, v := range t.Options.WithPrefix(optHeaderPrefix) {
		if k == "" {
			return nil, fmt.Errorf("http: option '%s' names no header", optHeaderPrefix)
		}
		s.header.Set(k, v)
	}
	s.identity = identity(s.url, s.header, t.Schema, s.fmtOpts)
	return s, nil
}

// identity names what a source loads: the URL (its secrets masked, and
// then the whole URL hashed), the headers (their values hashed: they may
// hold credentials), the columns and the json options.
func identity(u string, h http.Header, schema types.Schema, fmtOpts map[string]string) string {
	var b strings.Builder
	shown := redact.URL(u)
	fmt.Fprintf(&b, "http|%s|%s", shown, schema)
	if shown != u {
		sum := sha256.Sum256([]byte(u))
		fmt.Fprintf(&b, "|url=%s", hex.EncodeToString(sum[:8]))
	}
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		sum := sha256.Sum256([]byte(strings.Join(h[k], "\x00")))
		fmt.Fprintf(&b, "|%s=%s", k, hex.EncodeToString(sum[:8]))
	}
	keys = keys[:0]
	for k := range fmtOpts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "|json.%s=%s", k, fmtOpts[k])
	}
	return b.String()
}

// Load implements connector.FullSource. Its errors quote neither the
// URL's secrets nor the headers' (nor a response that echoes them).
func (s *Source) Load(ctx context.Context, emit func(row []types.Value) error) error {
	return redact.Error(s.load(ctx, emit), s.secrets...)
}

func (s *Source) load(ctx context.Context, emit func(row []types.Value) error) error {
	dec, err := s.format.NewDecoder(s.schema, s.fmtOpts)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return fmt.Errorf("http table %s: %w", s.name, err)
	}
	req.Header = s.header.Clone()
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "application/json")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			// The client's message quotes the URL: quote it masked.
			err = fmt.Errorf("%s %q: %w", uerr.Op, s.shown, uerr.Err)
		}
		return fmt.Errorf("http table %s: cannot load: %w", s.name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		return fmt.Errorf("http table %s: GET %s: %s: %s", s.name, s.shown, resp.Status, bytes.TrimSpace(body))
	}
	if resp.ContentLength > s.maxSize {
		return fmt.Errorf("http table %s: GET %s: the response is %d bytes, larger than '%s' (%s)",
			s.name, s.url, resp.ContentLength, optMaxSize, formatSize(s.maxSize))
	}
	if err := s.decode(&sizeLimit{r: resp.Body, left: s.maxSize}, dec, emit); err != nil {
		if errors.Is(err, errTooLarge) {
			return fmt.Errorf("http table %s: GET %s: the response is larger than '%s' (%s): raise it, or serve less",
				s.name, s.url, optMaxSize, formatSize(s.maxSize))
		}
		return err
	}
	return nil
}

// decode emits the rows of a response body.
func (s *Source) decode(body io.Reader, dec format.Decoder, emit func(row []types.Value) error) error {
	jd := json.NewDecoder(body)
	tok, err := jd.Token()
	if err != nil {
		return fmt.Errorf("http table %s: GET %s: cannot read the response: %w", s.name, s.shown, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return fmt.Errorf("http table %s: GET %s: the response is not a JSON array", s.name, s.shown)
	}
	row := make([]types.Value, s.schema.Len())
	var raw json.RawMessage
	for n := 0; jd.More(); n++ {
		raw = raw[:0]
		if err := jd.Decode(&raw); err != nil {
			return fmt.Errorf("http table %s: GET %s: element %d: %w", s.name, s.shown, n, err)
		}
		clear(row)
		if err := dec.Decode(raw, row); err != nil {
			if herr := s.policy.Handle(fmt.Sprintf("%s element %d", s.shown, n), raw, err); herr != nil {
				return herr
			}
			continue
		}
		if err := emit(row); err != nil {
			return err
		}
	}
	if _, err := jd.Token(); err != nil {
		return fmt.Errorf("http table %s: GET %s: cannot read the response: %w", s.name, s.shown, err)
	}
	return nil
}

// errTooLarge is the error of a body read past its limit.
var errTooLarge = errors.New("response too large")

// sizeLimit reads r until more than left bytes would have been read,
// then fails with errTooLarge: it reads at most one byte past the limit.
type sizeLimit struct {
	r    io.Reader
	left int64
}

func (l *sizeLimit) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		return n - 1, errTooLarge // the byte past the limit is not handed on
	}
	return n, err
}

// formatSize renders a size in bytes in the largest unit that divides it.
func formatSize(n int64) string {
	for _, u := range []struct {
		shift int
		name  string
	}{{40, "TiB"}, {30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d %s", n>>u.shift, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// ReloadInterval implements connector.FullSource.
func (s *Source) ReloadInterval() time.Duration { return s.reload }

// Identity implements connector.FullSource.
func (s *Source) Identity() string { return s.identity }

// Skipped returns the number of malformed elements skipped so far.
func (s *Source) Skipped() int64 { return s.policy.Skipped() }

// Close implements connector.LookupSource.
func (s *Source) Close() error {
	s.client.CloseIdleConnections()
	return s.policy.Close()
}

var (
	_ connector.LookupFactory = Factory{}
	_ connector.FullSource    = (*Source)(nil)
)
