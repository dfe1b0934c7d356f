package http

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/connector/redact"
	"github.com/sluicesql/sluice/types"
)

// Sink option keys.
const (
	optMethod       = "sink.method"
	optBatchMode    = "sink.batch.mode"
	optFlushRows    = "sink.buffer-flush.max-rows"
	optFlushEvery   = "sink.buffer-flush.interval"
	optMaxRetries   = "sink.max-retries"
	optRetryInitial = "sink.retry.initial-backoff"
	optRetryMax     = "sink.retry.max-backoff"
	optSinkTimeout  = "sink.timeout"
	optSinkDL       = "sink.dead-letter.path"
)

var sinkOptions = []string{"connector", optURL, optFormat, optMethod, optBatchMode, optFlushRows, optFlushEvery,
	optMaxRetries, optRetryInitial, optRetryMax, optSinkTimeout, optSinkDL}

// Batch modes: how a request's body holds its rows.
const (
	modeArray  = "array"  // a JSON array of the rows' objects
	modeNDJSON = "ndjson" // the rows' objects, one a line
	modeSingle = "single" // one row a request
)

// errorBodyBytes is how much of a failed response's body a message quotes.
const errorBodyBytes = 256

// Sink sends rows to 'url' in batches: a goroutine sends each batch, in
// the order written, once it holds 'sink.buffer-flush.max-rows' rows or
// its first row is 'sink.buffer-flush.interval' old, and at every Flush;
// Write waits while a full batch waits for the one being sent (back
// pressure). A failed request is retried with back-off; a batch that
// still fails goes to 'sink.dead-letter.path', or fails the sink.
type Sink struct {
	table      connector.Table
	env        connector.Env
	url        string
	shown      string   // url as messages quote it
	secrets    []string // masked in every message
	method     string
	header     http.Header
	mode       string
	maxRows    int
	interval   time.Duration
	maxRetries int
	backoff    connector.Backoff // between retries
	timeout    time.Duration
	client     *http.Client
	enc        format.Encoder
	dl         *deadLetters

	startOnce sync.Once
	ctx       context.Context // the sending goroutine's life
	cancel    context.CancelFunc
	done      chan struct{} // the sending goroutine ended
	kick      chan struct{} // a batch is due

	mu       sync.Mutex
	cond     *sync.Cond // pending, inflight or fatal changed
	pending  *rowBuf    // rows written, not yet being sent
	spare    *rowBuf
	firstAt  time.Time // when pending got its first row
	inflight int       // rows being sent
	flushReq bool      // a Flush waits: send what is pending now
	fatal    error
	reported bool // Write or Flush returned fatal
	closed   bool

	dead atomic.Int64 // rows written to the dead-letter file
	row  []byte       // encoding scratch (Write's goroutine)
}

// rowBuf is encoded rows, one after another.
type rowBuf struct {
	data []byte
	ends []int
}

func (b *rowBuf) len() int { return len(b.ends) }

func (b *rowBuf) row(i int) []byte {
	start := 0
	if i > 0 {
		start = b.ends[i-1]
	}
	return b.data[start:b.ends[i]]
}

func (b *rowBuf) reset() { b.data, b.ends = b.data[:0], b.ends[:0] }

// CreateSink implements connector.SinkFactory. Nothing is sent before the
// first write: building a plan builds sinks it never writes with.
func (Factory) CreateSink(t connector.Table, env connector.Env) (connector.Sink, error) {
	s, err := newSink(t, env)
	if err != nil {
		return nil, redact.Error(fmt.Errorf("http: %w", err), redact.Secrets(t.Options)...)
	}
	return s, nil
}

func newSink(t connector.Table, env connector.Env) (*Sink, error) {
	if err := connector.RejectMetadata("http", t); err != nil {
		return nil, err
	}
	o := t.Options
	if err := o.CheckKnown("http sink", sinkOptions, optHeaderPrefix, "json."); err != nil {
		return nil, err
	}
	s := &Sink{table: t, env: env, header: http.Header{}, secrets: redact.Secrets(o), pending: &rowBuf{}, spare: &rowBuf{},
		done: make(chan struct{}), kick: make(chan struct{}, 1)}
	s.cond = sync.NewCond(&s.mu)
	var err error
	if s.url, err = o.Required(optURL); err != nil {
		return nil, fmt.Errorf("%w: where the sink sends its rows", err)
	}
	s.shown = redact.URL(s.url)
	u, err := url.Parse(s.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("option '%s': %q is not an http:// or https:// URL", optURL, s.shown)
	}
	switch s.method = strings.ToUpper(o.String(optMethod, http.MethodPost)); s.method {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
	default:
		return nil, fmt.Errorf("option '%s' must be 'POST', 'PUT' or 'PATCH', not '%s'", optMethod, o[optMethod])
	}
	switch s.mode = strings.ToLower(o.String(optBatchMode, modeArray)); s.mode {
	case modeArray, modeNDJSON, modeSingle:
	default:
		return nil, fmt.Errorf("option '%s' must be 'array', 'ndjson' or 'single', not '%s'", optBatchMode, o[optBatchMode])
	}
	n, err := o.Int(optFlushRows, 500)
	if err != nil {
		return nil, err
	}
	if n < 1 || n > 1<<20 {
		return nil, fmt.Errorf("option '%s' must be between 1 and 1048576, not %d", optFlushRows, n)
	}
	s.maxRows = int(n)
	if s.interval, err = o.PositiveDuration(optFlushEvery, time.Second); err != nil {
		return nil, err
	}
	r, err := o.Int(optMaxRetries, 3)
	if err != nil {
		return nil, err
	}
	if r < 0 || r > 1000 {
		return nil, fmt.Errorf("option '%s' must be between 0 and 1000, not %d", optMaxRetries, r)
	}
	s.maxRetries = int(r)
	if s.backoff, err = o.Backoff(optRetryInitial, optRetryMax, connector.Backoff{Initial: time.Second, Max: 30 * time.Second}); err != nil {
		return nil, err
	}
	if s.timeout, err = o.PositiveDuration(optSinkTimeout, 30*time.Second); err != nil {
		return nil, err
	}
	if p, ok := o[optSinkDL]; ok {
		if p == "" {
			return nil, fmt.Errorf("option '%s' must not be empty", optSinkDL)
		}
		s.dl = &deadLetters{path: p}
	}
	for k, v := range o.WithPrefix(optHeaderPrefix) {
		if k == "" {
			return nil, fmt.Errorf("option '%s' names no header", optHeaderPrefix)
		}
		s.header.Set(k, v)
	}
	if s.header.Get("Content-Type") == "" {
		if s.mode == modeNDJSON {
			s.header.Set("Content-Type", "application/x-ndjson")
		} else {
			s.header.Set("Content-Type", "application/json")
		}
	}
	if s.header.Get("User-Agent") == "" {
		s.header.Set("User-Agent", "sluice")
	}
	if f := o.String(optFormat, "json"); f != "json" {
		return nil, fmt.Errorf("option '%s': unsupported value '%s' (the sink sends JSON: 'json')", optFormat, f)
	}
	if env.Formats == nil {
		return nil, errors.New("no format registry")
	}
	ff, err := env.Formats.Lookup("json")
	if err != nil {
		return nil, err
	}
	if s.enc, err = ff.NewEncoder(t.Schema, o.WithPrefix("json.")); err != nil {
		return nil, err
	}
	s.client = &http.Client{
		Timeout: s.timeout,
		// A redirect is answered as it is: POST turned into GET, or a
		// body sent to another host, is not what the table says.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return s, nil
}

// Dropped is the number of rows written to the dead-letter file.
func (s *Sink) Dropped() int64 { return s.dead.Load() }

func (s *Sink) start() {
	s.startOnce.Do(func() {
		s.ctx, s.cancel = context.WithCancel(context.Background())
		go s.run()
	})
}

// Write implements connector.Sink.
func (s *Sink) Write(ctx context.Context, b *types.Batch) error {
	s.start()
	for i := range b.Rows {
		var err error
		if s.row, err = s.enc.Encode(s.row[:0], b.Rows[i]); err != nil {
			return fmt.Errorf("http table '%s': cannot encode a row: %w", s.table.Name, err)
		}
		if err := s.add(ctx, s.row); err != nil {
			return err
		}
	}
	return nil
}

// add appends an encoded row to pending, first waiting while pending
// holds a full batch.
func (s *Sink) add(ctx context.Context, row []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending.len() >= s.maxRows && s.fatal == nil {
		stop := context.AfterFunc(ctx, s.broadcast)
		defer stop()
		for s.pending.len() >= s.maxRows && s.fatal == nil {
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			s.kickSender()
			s.cond.Wait()
		}
	}
	if s.fatal != nil {
		s.reported = true
		return s.fatal
	}
	p := s.pending
	if p.len() == 0 {
		s.firstAt = time.Now()
	}
	p.data = append(p.data, row...)
	p.ends = append(p.ends, len(p.data))
	if p.len() >= s.maxRows {
		s.kickSender()
	}
	return nil
}

func (s *Sink) broadcast() {
	s.mu.Lock()
	s.cond.Broadcast()
	s.mu.Unlock()
}

func (s *Sink) kickSender() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Flush implements connector.Sink: it returns once every row written is
// delivered (or in the dead-letter file).
func (s *Sink) Flush(ctx context.Context) error {
	s.start()
	s.mu.Lock()
	defer s.mu.Unlock()
	stop := context.AfterFunc(ctx, s.broadcast)
	defer stop()
	for s.fatal == nil && (s.pending.len() > 0 || s.inflight > 0) {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		s.flushReq = true
		s.kickSender()
		s.cond.Wait()
	}
	s.flushReq = false
	if s.fatal != nil {
		s.reported = true
	}
	return s.fatal
}

// Close implements connector.Sink: what is pending is sent (for at most
// 'sink.timeout' more), then the sending goroutine ends.
func (s *Sink) Close() error {
	var err error
	s.mu.Lock()
	started := s.ctx != nil
	s.mu.Unlock()
	if started {
		ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
		err = s.Flush(ctx)
		cancel()
		s.mu.Lock()
		switch {
		case err == nil:
		case err == s.fatal:
			if s.reported {
				err = nil // Write or Flush returned it already
			}
			s.reported = true
		default:
			err = fmt.Errorf("http table '%s': %d rows not delivered to %s when the sink closed: %w",
				s.table.Name, s.pending.len()+s.inflight, s.shown, err)
		}
		s.closed = true
		s.cond.Broadcast()
		s.mu.Unlock()
		s.cancel()
		s.kickSender()
		<-s.done
		s.client.CloseIdleConnections()
	}
	if s.dl != nil {
		if cerr := s.dl.close(); err == nil {
			err = cerr
		}
	}
	return err
}

// run sends the batches as they become due, until the sink closes or
// fails.
func (s *Sink) run() {
	defer close(s.done)
	timer := time.NewTimer(s.interval)
	defer timer.Stop()
	for {
		s.mu.Lock()
		for s.fatal == nil && !s.closed && s.due() {
			b := s.pending
			s.pending, s.spare = s.spare, nil
			s.inflight = b.len()
			s.cond.Broadcast() // a Write waiting for room has it
			s.mu.Unlock()
			err := s.deliver(b)
			b.reset()
			s.mu.Lock()
			s.spare = b
			s.inflight = 0
			if err != nil && s.fatal == nil {
				s.fatal = err
			}
			s.cond.Broadcast()
		}
		if s.fatal != nil || s.closed {
			s.mu.Unlock()
			return
		}
		wait := s.interval
		if s.pending.len() > 0 {
			wait = max(time.Until(s.firstAt.Add(s.interval)), time.Millisecond)
		}
		s.mu.Unlock()
		timer.Reset(wait) // drops a tick not received (Go 1.23 timers)
		select {
		case <-s.kick:
		case <-timer.C:
		case <-s.ctx.Done():
			return
		}
	}
}

// due reports whether pending is to be sent now.
func (s *Sink) due() bool {
	n := s.pending.len()
	return n > 0 && (n >= s.maxRows || s.flushReq || time.Since(s.firstAt) >= s.interval)
}

// deliver sends the rows of b: one request, or one a row in 'single'
// mode.
func (s *Sink) deliver(b *rowBuf) error {
	if s.mode == modeSingle {
		for i := range b.len() {
			if err := s.send(b.row(i), b, i, i+1); err != nil {
				return err
			}
		}
		return nil
	}
	var body []byte
	if s.mode == modeArray {
		body = make([]byte, 0, len(b.data)+b.len()+2)
		body = append(body, '[')
		for i := range b.len() {
			if i > 0 {
				body = append(body, ',')
			}
			body = append(body, b.row(i)...)
		}
		body = append(body, ']')
	} else {
		body = make([]byte, 0, len(b.data)+b.len())
		for i := range b.len() {
			body = append(append(body, b.row(i)...), '\n')
		}
	}
	return s.send(body, b, 0, b.len())
}

// failure is a request that did not succeed.
type failure struct {
	status     int    // 0: no response
	msg        string // for people
	retryable  bool
	retryAfter time.Duration // the response's Retry-After, if any
}

// send sends body (rows from to to of b), retrying as the table says. A
// request that still fails puts the rows in the dead-letter file, if
// the table has one and the failure is theirs (not the endpoint's), or
// fails the sink.
func (s *Sink) send(body []byte, b *rowBuf, from, to int) error {
	backoff := s.backoff.Initial
	for attempt := 1; ; attempt++ {
		f := s.post(body)
		if f == nil {
			if attempt > 1 {
				s.env.Log("http table '%s': %s %s succeeded at attempt %d", s.table.Name, s.method, s.shown, attempt)
			}
			return nil
		}
		if s.ctx.Err() != nil {
			return fmt.Errorf("http table '%s': the sink closed while sending %d rows: %s", s.table.Name, to-from, f.msg)
		}
		if f.retryable && attempt <= s.maxRetries {
			wait := min(max(backoff, f.retryAfter), s.backoff.Max)
			if attempt == 1 {
				s.env.Log("http table '%s': %s; retrying in %s (at most %d times)", s.table.Name, f.msg, wait, s.maxRetries)
			}
			select {
			case <-time.After(wait):
			case <-s.ctx.Done():
				return fmt.Errorf("http table '%s': the sink closed while sending %d rows: %s", s.table.Name, to-from, f.msg)
			}
			backoff = s.backoff.Next(backoff)
			continue
		}
		tried := ""
		if attempt > 1 {
			tried = fmt.Sprintf(" (after %d attempts)", attempt)
		}
		if s.dl == nil || endpointRefuses(f.status) {
			return fmt.Errorf("http table '%s': %s%s", s.table.Name, f.msg, tried)
		}
		msg := f.msg + tried
		now := timeField(time.Now())
		for i := from; i < to; i++ {
			if err := s.dl.write(now, field{"table", s.table.Name}, field{"url", s.shown}, field{"error", msg},
				field{"row", rawJSON(b.row(i))}); err != nil {
				return fmt.Errorf("http table '%s': %s; and %w", s.table.Name, msg, err)
			}
		}
		n := int64(to - from)
		s.env.CountDropped(n)
		if total := s.dead.Add(n); total == n || total/1000 != (total-n)/1000 {
			s.env.Log("http table '%s': %d rows written to the dead-letter file %s (%d so far): %s", s.table.Name, n, s.dl.path, total, msg)
		}
		return nil
	}
}

// post makes one request; nil is success (a 2xx answer).
func (s *Sink) post(body []byte) *failure {
	req, err := http.NewRequestWithContext(s.ctx, s.method, s.url, bytes.NewReader(body))
	if err != nil {
		return &failure{msg: redact.Text(err.Error(), s.secrets...)}
	}
	req.Header = s.header.Clone()
	resp, err := s.client.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // its message quotes the URL, unmasked
		}
		return &failure{msg: redact.Text(fmt.Sprintf("%s %s: %v", s.method, s.shown, err), s.secrets...), retryable: true}
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)) // so that the connection is used again
		return nil
	}
	text, _ := io.ReadAll(io.LimitReader(resp.Body, errorBodyBytes+1))
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	quoted := strings.TrimSpace(strings.ToValidUTF8(string(text[:min(len(text), errorBodyBytes)]), "\uFFFD"))
	if len(text) > errorBodyBytes {
		quoted += "..."
	}
	msg := fmt.Sprintf("%s %s: %s", s.method, s.shown, resp.Status)
	if loc := resp.Header.Get("Location"); resp.StatusCode >= 300 && resp.StatusCode < 400 && loc != "" {
		msg += " (redirect to " + redact.URL(loc) + ": the sink does not follow redirects; set 'url' to where it points)"
	}
	if quoted != "" {
		msg += ": " + quoted
	}
	f := &failure{status: resp.StatusCode, msg: redact.Text(msg, s.secrets...)}
	switch c := resp.StatusCode; {
	case c == http.StatusRequestTimeout, c == http.StatusTooManyRequests, c >= 500 && c != http.StatusNotImplemented && c != http.StatusHTTPVersionNotSupported:
		f.retryable = true
		f.retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"))
	}
	return f
}

// endpointRefuses reports whether a status says the endpoint takes no
// rows at all (a wrong address, method or credentials), rather than
// these rows: that fails the sink, dead-letter file or not.
func endpointRefuses(status int) bool {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusMethodNotAllowed,
		http.StatusProxyAuthRequired, http.StatusNotImplemented, http.StatusHTTPVersionNotSupported:
		return true
	}
	return status >= 300 && status < 400
}

// parseRetryAfter reads a Retry-After header: seconds or an HTTP date.
func parseRetryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

var (
	_ connector.SinkFactory = Factory{}
)
