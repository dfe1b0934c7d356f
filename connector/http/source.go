package http

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/types"
)

// Push source option keys.
const (
	optListen     = "source.listen"
	optPath       = "source.path"
	optAuth       = "source.auth"
	optToken      = "source.token"
	optMaxBody    = "source.max-body-size"
	optQueueSize  = "source.queue-size"
	optMaxOpen    = "source.max-open-requests"
	optTLSCert    = "source.tls.cert-file"
	optTLSKey     = "source.tls.key-file"
	optIgnoreJSON = "json.ignore-parse-errors"
)

var pushOptions = []string{"connector", optFormat, optListen, optPath, optAuth, optToken, optMaxBody,
	optQueueSize, optMaxOpen, optTLSCert, optTLSKey, connector.DeadLetterPathOption}

// Defaults of the push source's options.
const (
	defaultMaxBody   = 10 << 20
	defaultQueueSize = 10000
	defaultMaxOpen   = 1024
)

// pollWait is the longest a Read waits for rows before it returns with
// none (connector.Reader's contract).
const pollWait = 100 * time.Millisecond

// preallocBody is the most of a body's announced length allocated before
// its bytes arrive.
const preallocBody = 1 << 20

// retryAfter is the Retry-After of a 503: how soon a client may try again.
const retryAfter = "1"

// PushSource is a table whose rows are POSTed to an endpoint the job
// serves while it runs: one partition, read by one PushReader, which
// listens from Open to Close. A request is answered 200 once its rows are
// safe: in a job with checkpoints, once the checkpoint holding them
// completed; without, once the job has read them.
type PushSource struct {
	table   connector.Table
	env     connector.Env
	listen  string // host:port
	path    string // a path, or a prefix ending in '/'
	token   []byte // the token's SHA-256; nil: no authentication
	maxBody int64
	queue   int // rows waiting for the job, at most (one request may pass it)
	maxOpen int
	tls     *tls.Config // nil: plain HTTP

	format  format.Factory
	fmtOpts map[string]string
	ignore  bool // 'json.ignore-parse-errors': a request's bad records are skipped, not the request refused
	dl      *deadLetters
	meta    []pushMeta

	skipped atomic.Int64 // requests refused as malformed, and records skipped

	mu   sync.Mutex
	open bool // a reader listens
}

// CreateSource implements connector.SourceFactory: the push source.
func (Factory) CreateSource(t connector.Table, env connector.Env) (connector.Source, error) {
	s, err := newPushSource(t, env)
	if err != nil {
		return nil, fmt.Errorf("http: %w", err)
	}
	return s, nil
}

func newPushSource(t connector.Table, env connector.Env) (*PushSource, error) {
	o := t.Options
	if err := o.CheckKnown("http source", pushOptions, "json."); err != nil {
		if _, ok := o[optURL]; ok {
			return nil, fmt.Errorf("%w (a scanned http table is a push source, which takes the 'source.' options: 'url' is for a sink or a dimension table)", err)
		}
		return nil, err
	}
	s := &PushSource{table: t, env: env}
	var err error
	if s.listen, err = o.Required(optListen); err != nil {
		return nil, fmt.Errorf("%w: the host and port the push endpoint listens on, e.g. '127.0.0.1:8080'", err)
	}
	host, port, err := net.SplitHostPort(s.listen)
	if err != nil {
		return nil, fmt.Errorf("option '%s': '%s' is not host:port (e.g. '0.0.0.0:8080')", optListen, s.listen)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return nil, fmt.Errorf("option '%s': '%s' is not a port number", optListen, port)
	}
	s.path = o.String(optPath, "/")
	if !strings.HasPrefix(s.path, "/") || strings.ContainsAny(s.path, "?# ") {
		return nil, fmt.Errorf("option '%s' must be a path starting with '/', without a query, not '%s'", optPath, s.path)
	}
	token, hasToken := o[optToken]
	switch auth := strings.ToLower(o.String(optAuth, "bearer")); auth {
	case "bearer":
		if !hasToken || token == "" {
			return nil, fmt.Errorf("missing required option '%s': requests must carry 'Authorization: Bearer <token>' "+
				"(or set '%s' = 'none', on a loopback address only)", optToken, optAuth)
		}
		for _, c := range []byte(token) {
			if c <= ' ' || c >= 0x7f {
				return nil, fmt.Errorf("option '%s' must be printable ASCII without spaces", optToken)
			}
		}
		sum := sha256.Sum256([]byte(token))
		s.token = sum[:]
	case "none":
		if hasToken {
			return nil, fmt.Errorf("options '%s' and '%s' = 'none' contradict each other", optToken, optAuth)
		}
		if !loopback(host) {
			return nil, fmt.Errorf("option '%s' = 'none' is for a loopback address only ('127.0.0.1:%s'), not '%s': "+
				"anyone who reaches the endpoint could write into the job; set '%s'", optAuth, port, s.listen, optToken)
		}
	default:
		return nil, fmt.Errorf("option '%s' must be 'bearer' or 'none', not '%s'", optAuth, auth)
	}
	if s.maxBody, err = o.MemorySize(optMaxBody, defaultMaxBody); err != nil {
		return nil, err
	}
	if s.maxBody <= 0 {
		return nil, fmt.Errorf("option '%s' must be a positive size (e.g. '10 mb')", optMaxBody)
	}
	q, err := o.Int(optQueueSize, defaultQueueSize)
	if err != nil {
		return nil, err
	}
	if q < 1 || q > 1<<30 {
		return nil, fmt.Errorf("option '%s' must be between 1 and 2^30 rows, not %d", optQueueSize, q)
	}
	s.queue = int(q)
	m, err := o.Int(optMaxOpen, defaultMaxOpen)
	if err != nil {
		return nil, err
	}
	if m < 1 || m > 1<<20 {
		return nil, fmt.Errorf("option '%s' must be between 1 and 1048576, not %d", optMaxOpen, m)
	}
	s.maxOpen = int(m)
	cert, key := o[optTLSCert], o[optTLSKey]
	if (cert == "") != (key == "") {
		return nil, fmt.Errorf("options '%s' and '%s' go together", optTLSCert, optTLSKey)
	}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("options '%s' and '%s': %w", optTLSCert, optTLSKey, err)
		}
		s.tls = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	}
	if f := o.String(optFormat, "json"); f != "json" {
		return nil, fmt.Errorf("option '%s': unsupported value '%s' (a push source takes JSON: 'json')", optFormat, f)
	}
	if env.Formats == nil {
		return nil, errors.New("no format registry")
	}
	if s.format, err = env.Formats.Lookup("json"); err != nil {
		return nil, err
	}
	s.fmtOpts = o.WithPrefix("json.")
	if _, err := s.format.NewDecoder(t.Schema, s.fmtOpts); err != nil {
		return nil, err
	}
	if s.ignore, err = o.Bool(optIgnoreJSON, false); err != nil {
		return nil, err
	}
	if p, ok := o[connector.DeadLetterPathOption]; ok {
		if p == "" {
			return nil, fmt.Errorf("option '%s' must not be empty", connector.DeadLetterPathOption)
		}
		s.dl = &deadLetters{path: p}
	}
	if s.meta, err = pushMetadata(t); err != nil {
		return nil, err
	}
	return s, nil
}

// loopback reports whether host (of a listen address) is a loopback
// address: only this machine can reach it.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Partitions implements connector.Source: one endpoint, one partition.
func (s *PushSource) Partitions() int { return 1 }

// Bounded implements connector.Source.
func (s *PushSource) Bounded() bool { return false }

// Acknowledges implements connector.Acknowledged: a job answers its own
// requests, so no two jobs share a reader.
func (s *PushSource) Acknowledges() bool { return true }

// Identity implements connector.Identified: the endpoint (not the token).
func (s *PushSource) Identity() string { return "http push " + s.listen + s.path }

// Skipped returns the requests refused as malformed and the records
// skipped so far.
func (s *PushSource) Skipped() int64 { return s.skipped.Load() }

// Open implements connector.Source.
func (s *PushSource) Open(ctx context.Context, p int) (connector.Reader, error) {
	return s.OpenAfter(ctx, p, 0)
}

// OpenAfter implements connector.Resumer: the rows are numbered from
// offset+1 on, so that their origin offsets keep rising across runs of a
// job (a request comes again after a crash as new rows, which stateful
// operators must not drop as replays).
func (s *PushSource) OpenAfter(ctx context.Context, p int, offset int64) (connector.Reader, error) {
	if p != 0 {
		return nil, fmt.Errorf("http table '%s' has one partition, not %d", s.table.Name, p+1)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open {
		return nil, fmt.Errorf("http table '%s': its endpoint %s is served already", s.table.Name, s.listen)
	}
	phys := s.table.Schema.Len()
	r := &PushReader{src: s, next: offset + 1, phys: phys, width: phys + len(s.meta),
		sem: make(chan struct{}, s.maxOpen), avail: make(chan struct{}, 1), wake: make(chan struct{}, 1),
		served: make(chan struct{})}
	r.decoders.New = func() any {
		dec, err := s.format.NewDecoder(s.table.Schema, s.fmtOpts)
		if err != nil {
			return err // checked when the table was created: does not happen
		}
		if pr, ok := dec.(format.Pruner); ok && s.table.Read != nil {
			pr.Prune(s.table.Read[:phys])
		}
		return dec
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", s.listen)
	if err != nil {
		return nil, fmt.Errorf("http table '%s': cannot listen on %s ('%s'): %w", s.table.Name, s.listen, optListen, err)
	}
	r.addr = ln.Addr().String()
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute,
		IdleTimeout: 2 * time.Minute, TLSConfig: s.tls, MaxHeaderBytes: 64 << 10,
		ErrorLog: log.New(logWriter{s}, "", 0)}
	go r.serve(ln)
	s.open = true
	scheme := "http"
	if s.tls != nil {
		scheme = "https"
	}
	s.env.Log("http table '%s': receiving on %s://%s%s", s.table.Name, scheme, r.addr, s.path)
	return r, nil
}

// logWriter sends what the HTTP server logs (a failed TLS handshake, a
// handler's panic) to the job's log.
type logWriter struct{ s *PushSource }

func (l logWriter) Write(p []byte) (int, error) {
	l.s.env.Log("http table '%s': %s", l.s.table.Name, bytes.TrimRight(p, "\n"))
	return len(p), nil
}

// pushRequest is a request's rows, queued for the job or read by it and
// waiting to be safe.
type pushRequest struct {
	rows   []types.Value // n rows of the reader's width, one after another
	n      int
	read   int       // rows the job has read
	answer chan bool // gets true once the rows are safe, false if they never will be
}

// PushReader serves a push source's endpoint and hands the rows of the
// requests it accepts to the job, in the order accepted. It answers a
// request once all its rows are read and, with checkpoints, the
// checkpoint after them completed (connector.Acknowledger); what is
// queued or unanswered when it closes is answered 503.
type PushReader struct {
	src   *PushSource
	next  int64 // the origin offset of the next row
	phys  int
	width int
	addr  string // where it listens

	srv      *http.Server
	served   chan struct{} // the server ended
	decoders sync.Pool     // format.Decoder
	sem      chan struct{} // a slot per open request
	avail    chan struct{} // a request was queued
	wake     chan struct{} // Wake cuts a Read's wait short

	mu        sync.Mutex // guards what follows; Acknowledge and Close may come from another goroutine after the task ended
	queue     []*pushRequest
	queued    int                            // rows in queue not yet read
	acks      connector.AckLog[*pushRequest] // read whole, not yet answered
	deferAcks bool
	closed    bool
	fatal     error
}

// Addr is the address the reader listens on (with the port the system
// chose, for a 'source.listen' of port 0).
func (r *PushReader) Addr() string { return r.addr }

func (r *PushReader) serve(ln net.Listener) {
	defer close(r.served)
	var err error
	if r.srv.TLSConfig != nil {
		err = r.srv.ServeTLS(ln, "", "")
	} else {
		err = r.srv.Serve(ln)
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		r.mu.Lock()
		if r.fatal == nil {
			r.fatal = fmt.Errorf("http table '%s': the endpoint on %s failed: %w", r.src.table.Name, r.addr, err)
		}
		r.mu.Unlock()
	}
}

// Wake implements connector.Waker.
func (r *PushReader) Wake() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// DeferAcks implements connector.Acknowledger.
func (r *PushReader) DeferAcks() {
	r.mu.Lock()
	r.deferAcks = true
	r.mu.Unlock()
}

// Barrier implements connector.Acknowledger: the requests read whole so
// far belong to checkpoint id (one read in part belongs to a later one).
func (r *PushReader) Barrier(id int64) {
	r.mu.Lock()
	r.acks.Barrier(id)
	r.mu.Unlock()
}

// Acknowledge implements connector.Acknowledger: the requests of
// checkpoint id and earlier ones are answered 200.
func (r *PushReader) Acknowledge(id int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answerLocked(r.acks.Covered(id))
	return nil
}

// answerLocked answers the first n unacknowledged requests: their rows
// are safe.
func (r *PushReader) answerLocked(n int) {
	if n <= 0 {
		return
	}
	for _, q := range r.acks.Pending()[:n] {
		q.answer <- true
	}
	r.acks.Drop(n)
}

// Read implements connector.Reader.
func (r *PushReader) Read(ctx context.Context, b *types.Batch, max int) error {
	r.mu.Lock()
	if r.fatal != nil {
		err := r.fatal
		r.mu.Unlock()
		return err
	}
	if !r.deferAcks {
		// The job processed what the last Read returned.
		r.answerLocked(r.acks.Len())
	}
	empty := len(r.queue) == 0
	r.mu.Unlock()
	if empty {
		t := time.NewTimer(pollWait)
		defer t.Stop()
		select {
		case <-r.avail:
		case <-t.C:
			return nil
		case <-r.wake:
			return nil
		case <-r.served:
			r.mu.Lock()
			err := r.fatal
			r.mu.Unlock()
			if err == nil {
				err = errors.New("the reader is closed")
			}
			return err
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	w := r.width
	for added := 0; added < max && len(r.queue) > 0; {
		q := r.queue[0]
		k := min(max-added, q.n-q.read)
		for i := q.read; i < q.read+k; i++ {
			vals := b.AddRow(types.Insert, types.Origin{Part: 0, Offset: r.next}, w)
			copy(vals, q.rows[i*w:(i+1)*w])
			r.next++
		}
		q.read += k
		added += k
		r.queued -= k
		if q.read == q.n {
			q.rows = nil
			r.queue[0] = nil
			r.queue = r.queue[1:]
			r.acks.Add(q)
		}
	}
	if len(r.queue) == 0 {
		r.queue = nil
	}
	return nil
}

// enqueue queues q for the job, unless the queue is full (a request
// finds room when the queue is empty, whatever its size) or the reader
// closed.
func (r *PushReader) enqueue(q *pushRequest) (ok bool, why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false, "the job is stopping: send the request again later"
	}
	if r.queued > 0 && r.queued+q.n > r.src.queue {
		return false, fmt.Sprintf("the job's queue is full (%d rows waiting, '%s' = %d): send the request again later",
			r.queued, optQueueSize, r.src.queue)
	}
	r.queue = append(r.queue, q)
	r.queued += q.n
	select {
	case r.avail <- struct{}{}:
	default:
	}
	return true, ""
}

// Skipped implements connector.Stats.
func (r *PushReader) Skipped() int64 { return r.src.skipped.Load() }

// Close implements connector.Reader: the endpoint stops listening, and
// the requests not yet answered are answered 503 (their senders send
// them again).
func (r *PushReader) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	for _, q := range r.queue {
		q.answer <- false
	}
	for _, q := range r.acks.Pending() {
		q.answer <- false
	}
	r.acks.Reset()
	r.queue, r.queued = nil, 0
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	err := r.srv.Shutdown(ctx)
	cancel()
	if err != nil {
		r.srv.Close() // the requests still being sent are cut off
	}
	<-r.served
	s := r.src
	s.mu.Lock()
	s.open = false
	s.mu.Unlock()
	if s.dl != nil {
		return s.dl.close()
	}
	return nil
}

// ServeHTTP receives a push request.
func (r *PushReader) ServeHTTP(w http.ResponseWriter, q *http.Request) {
	s := r.src
	// The token first: a sender without it learns nothing, not even
	// which paths there are.
	if s.token != nil && !s.authorized(q.Header.Get("Authorization")) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="sluice"`)
		reply(w, http.StatusUnauthorized, "error", "missing or wrong token: send 'Authorization: Bearer <token>'")
		return
	}
	q.URL.Path = cleanPath(q.URL.Path)
	if !s.matches(q.URL.Path) {
		reply(w, http.StatusNotFound, "error", "no endpoint at "+q.URL.Path+": POST to "+s.path)
		return
	}
	if q.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		reply(w, http.StatusMethodNotAllowed, "error", q.Method+" is not allowed: POST the records")
		return
	}
	if ce := q.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		reply(w, http.StatusUnsupportedMediaType, "error", "Content-Encoding '"+ce+"' is not supported: send the body as it is")
		return
	}
	select {
	case r.sem <- struct{}{}:
		defer func() { <-r.sem }()
	default:
		retryLater(w, fmt.Sprintf("too many requests are open ('%s' = %d): send the request again later", optMaxOpen, s.maxOpen))
		return
	}
	if q.ContentLength > s.maxBody {
		w.Header().Set("Connection", "close")
		reply(w, http.StatusRequestEntityTooLarge, "error", s.tooLarge())
		return
	}
	received := s.now()
	var buf bytes.Buffer
	if q.ContentLength > 0 {
		// What the sender says it will send, up to a point: memory
		// follows the bytes that come, not a header's claim.
		buf.Grow(int(min(q.ContentLength, preallocBody)))
	}
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, q.Body, s.maxBody)); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			reply(w, http.StatusRequestEntityTooLarge, "error", s.tooLarge())
			return
		}
		reply(w, http.StatusBadRequest, "error", "cannot read the body: "+err.Error())
		return
	}
	body := buf.Bytes()
	meta := make([]types.Value, len(s.meta))
	for i, m := range s.meta {
		meta[i] = m(q, received)
	}
	dec := r.decoders.Get().(format.Decoder)
	req, skipped, err := r.decode(dec, body, meta)
	r.decoders.Put(dec)
	if err != nil {
		msg := describe(body, err)
		r.refused(q, body, msg, received)
		reply(w, http.StatusBadRequest, "error", msg)
		return
	}
	for _, e := range skipped {
		r.skippedRecord(q, body, e, received)
	}
	if req.n == 0 {
		replyOK(w, 0, len(skipped))
		return
	}
	if ok, why := r.enqueue(req); !ok {
		retryLater(w, why)
		return
	}
	select {
	case ok := <-req.answer:
		if !ok {
			retryLater(w, "the job stopped before the records were safe: send the request again")
			return
		}
		replyOK(w, req.n, len(skipped))
	case <-q.Context().Done():
		// The sender went away: the rows are the job's all the same.
	}
}

// decode decodes the records of body, each into a row followed by meta.
// A body that does not split into records, or (unless 'json.ignore-
// parse-errors') a record that does not decode, is an error: nothing of
// the request is taken. Otherwise the records that do not decode are
// returned as skipped.
func (r *PushReader) decode(dec format.Decoder, body []byte, meta []types.Value) (*pushRequest, []*recordError, error) {
	w := r.width
	var rows []types.Value
	var skipped []*recordError
	n := 0
	err := splitBody(body, func(num, off int, rec []byte) error {
		rows = slices.Grow(rows, w)
		row := rows[len(rows) : len(rows)+w]
		if err := dec.Decode(rec, row[:r.phys]); err != nil {
			clear(row)
			e := &recordError{n: num, off: off, err: err}
			if !r.src.ignore {
				return e
			}
			skipped = append(skipped, e)
			return nil
		}
		copy(row[r.phys:], meta)
		rows = rows[:len(rows)+w]
		n++
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return &pushRequest{rows: rows, n: n, answer: make(chan bool, 1)}, skipped, nil
}

// refused counts a request refused as malformed and keeps it in the
// dead-letter file, if the table has one.
func (r *PushReader) refused(q *http.Request, body []byte, msg string, received int64) {
	s := r.src
	if n := s.skipped.Add(1); n == 1 || n%1000 == 0 {
		s.env.Log("http table '%s': refused a malformed request from %s (%d so far): %s", s.table.Name, q.RemoteAddr, n, msg)
	}
	if s.dl == nil {
		return
	}
	err := s.dl.write(timeField(time.UnixMicro(received)), field{"table", s.table.Name}, field{"remote", q.RemoteAddr},
		field{"path", q.URL.Path}, field{"error", msg}, bodyField(body))
	r.deadLetterFailed(err)
}

// skippedRecord counts a record skipped by 'json.ignore-parse-errors' and
// keeps it in the dead-letter file, if the table has one.
func (r *PushReader) skippedRecord(q *http.Request, body []byte, e *recordError, received int64) {
	s := r.src
	s.skipped.Add(1)
	if s.dl == nil {
		return
	}
	end, _ := skipValue(body, e.off)
	err := s.dl.write(timeField(time.UnixMicro(received)), field{"table", s.table.Name}, field{"remote", q.RemoteAddr},
		field{"path", q.URL.Path}, field{"error", describe(body, e)}, field{"record", e.n}, bodyField(body[e.off:end]))
	r.deadLetterFailed(err)
}

// deadLetterFailed fails the job on a dead-letter file that cannot be
// written: what it should keep would be lost.
func (r *PushReader) deadLetterFailed(err error) {
	if err == nil {
		return
	}
	r.mu.Lock()
	if r.fatal == nil {
		r.fatal = fmt.Errorf("http table '%s': %w", r.src.table.Name, err)
	}
	r.mu.Unlock()
}

// matches reports whether a request for path is the endpoint's: the path
// itself, or under it when it ends in '/'.
func (s *PushSource) matches(path string) bool {
	if strings.HasSuffix(s.path, "/") {
		return strings.HasPrefix(path, s.path)
	}
	return path == s.path
}

// cleanPath is p with its '.' and '..' elements resolved and repeated
// slashes merged, keeping a trailing slash: '/hooks/../admin' is not
// under '/hooks/'.
func cleanPath(p string) string {
	c := path.Clean("/" + p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c
}

// authorized checks an Authorization header against the token, in a
// time that does not depend on how much of it is right.
func (s *PushSource) authorized(h string) bool {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(tok)))
	return subtle.ConstantTimeCompare(sum[:], s.token) == 1
}

func (s *PushSource) tooLarge() string {
	return fmt.Sprintf("the body is larger than '%s' (%s): send fewer records a request", optMaxBody, formatSize(s.maxBody))
}

// now is the time a request is received, in microseconds.
func (s *PushSource) now() int64 {
	if s.env.Now != nil {
		return s.env.Now()
	}
	return time.Now().UnixMicro()
}

// reply writes a JSON object {key: msg} with the status.
func reply(w http.ResponseWriter, status int, key, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]string{key: msg})
	w.Write(append(b, '\n'))
}

// retryLater answers 503 with a Retry-After.
func retryLater(w http.ResponseWriter, msg string) {
	w.Header().Set("Retry-After", retryAfter)
	reply(w, http.StatusServiceUnavailable, "error", msg)
}

func replyOK(w http.ResponseWriter, accepted, skipped int) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	if skipped > 0 {
		fmt.Fprintf(w, `{"accepted":%d,"skipped":%d}`+"\n", accepted, skipped)
		return
	}
	fmt.Fprintf(w, `{"accepted":%d}`+"\n", accepted)
}

// pushMeta computes a METADATA column's value from a request.
type pushMeta func(q *http.Request, received int64) types.Value

// pushMetadataTypes are the push source's METADATA keys with their types.
var pushMetadataTypes = map[string]string{
	"headers":        "MAP<STRING, STRING> NOT NULL",
	"remote-address": "STRING NOT NULL",
	"timestamp":      "TIMESTAMP_LTZ(3) NOT NULL",
	"path":           "STRING NOT NULL",
	"query":          "STRING NULL",
}

// ProvidesMetadata implements connector.MetadataFactory.
func (Factory) ProvidesMetadata(key string) bool { _, ok := pushMetadataTypes[key]; return ok }

// hiddenHeaders are left out of the 'headers' column: they hold the
// credentials of the request.
var hiddenHeaders = map[string]bool{"Authorization": true, "Proxy-Authorization": true}

func pushMetadata(t connector.Table) ([]pushMeta, error) {
	var out []pushMeta
	for _, m := range t.Metadata {
		want, ok := pushMetadataTypes[m.Key]
		if !ok {
			return nil, fmt.Errorf("column '%s': unknown METADATA key '%s'", m.Name, m.Key)
		}
		k := m.Type.Kind
		var f pushMeta
		switch m.Key {
		case "headers":
			if k == types.KindMap && m.Type.Elem != nil && m.Type.Value != nil && m.Type.Elem.Kind.IsString() && m.Type.Value.Kind.IsString() {
				kk, vk := m.Type.Elem.Kind, m.Type.Value.Kind
				f = func(q *http.Request, _ int64) types.Value { return headersValue(q.Header, kk, vk) }
			}
		case "remote-address":
			if k.IsString() {
				f = func(q *http.Request, _ int64) types.Value { return types.StringValue(q.RemoteAddr).WithKind(k) }
			}
		case "path":
			if k.IsString() {
				f = func(q *http.Request, _ int64) types.Value { return types.StringValue(q.URL.Path).WithKind(k) }
			}
		case "query":
			if k.IsString() {
				f = func(q *http.Request, _ int64) types.Value {
					if q.URL.RawQuery == "" {
						return types.NullValue
					}
					return types.StringValue(q.URL.RawQuery).WithKind(k)
				}
			}
		case "timestamp":
			if k.IsTimestamp() {
				f = func(_ *http.Request, received int64) types.Value {
					return types.TimestampLTZValue(received - received%1000).WithKind(k)
				}
			}
		}
		if f == nil {
			return nil, fmt.Errorf("column '%s': METADATA '%s' is %s and cannot be read as %s", m.Name, m.Key, want, m.Type)
		}
		out = append(out, f)
	}
	return out, nil
}

// headersValue is a request's headers as a MAP: names in lower case,
// the values of a repeated header joined by ", ", the credentials left
// out.
func headersValue(h http.Header, kk, vk types.Kind) types.Value {
	names := make([]string, 0, len(h))
	for name := range h {
		if !hiddenHeaders[http.CanonicalHeaderKey(name)] {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	m := &types.MapValue{Keys: make([]types.Value, len(names)), Values: make([]types.Value, len(names))}
	for i, name := range names {
		m.Keys[i] = types.StringValue(strings.ToLower(name)).WithKind(kk)
		m.Values[i] = types.StringValue(strings.Join(h[name], ", ")).WithKind(vk)
	}
	return types.NewMapValue(m)
}

var (
	_ connector.SourceFactory   = Factory{}
	_ connector.MetadataFactory = Factory{}
	_ connector.Resumer         = (*PushSource)(nil)
	_ connector.Acknowledged    = (*PushSource)(nil)
	_ connector.Identified      = (*PushSource)(nil)
	_ connector.Acknowledger    = (*PushReader)(nil)
	_ connector.Waker           = (*PushReader)(nil)
	_ connector.Stats           = (*PushReader)(nil)
	_ io.Closer                 = (*PushReader)(nil)
)
