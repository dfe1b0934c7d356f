package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sluicesql/sluice/metricstore"
)

// The metric store's routes: batch reads and subscriptions of the
// current values of metric groups (docs/server.md, "Metric values").

// metricStoreDir is the metric store's spill directory, in the data
// directory.
const metricStoreDir = "metricstore"

// maxReadValues bounds the values (keys × metrics) one read returns.
const maxReadValues = 1 << 20

// Subscription streams: a heartbeat after this long without an event,
// and a client that has not taken an event for writeTimeout is dropped
// (it resumes from its last event's id).
const (
	heartbeatInterval = 15 * time.Second
	writeTimeout      = 30 * time.Second
)

// buffers hold the encodings of reads and events (put back only up to
// maxPooled bytes).
var buffers = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

const maxPooled = 4 << 20

func putBuffer(bp *[]byte, b []byte) {
	if cap(b) <= maxPooled {
		*bp = b[:0]
		buffers.Put(bp)
	}
}

type metricReadRequest struct {
	Keys    json.RawMessage `json:"keys"`
	Metrics []string        `json:"metrics"`
}

// readMetrics answers POST /v1/metric-groups/{name}/read.
func (s *Server) readMetrics(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	var req metricReadRequest
	if !decode(w, r, &req, false) {
		return
	}
	g, err := s.metrics.Definition(name)
	if err != nil {
		s.metricStoreError(w, err)
		return
	}
	if len(req.Keys) == 0 {
		writeError(w, http.StatusBadRequest, codeBadRequest, `the request has no "keys": give an array of keys, each an array of values or an object of key columns`, nil)
		return
	}
	keys, err := metricstore.ParseKeys(g, req.Keys)
	if err != nil {
		s.metricStoreError(w, err)
		return
	}
	n := len(req.Metrics)
	if n == 0 {
		n = len(g.Metrics)
	}
	if len(keys)*n > maxReadValues {
		writeError(w, http.StatusBadRequest, codeBadRequest, fmt.Sprintf("%d keys × %d metrics are more values than one read returns (%d): read them in several", len(keys), n, maxReadValues), nil)
		return
	}
	bp := buffers.Get().(*[]byte)
	b, err := s.metrics.ReadJSON((*bp)[:0], name, keys, req.Metrics)
	if err != nil {
		putBuffer(bp, b)
		s.metricStoreError(w, err)
		return
	}
	b = append(b, '\n')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	w.Write(b)
	putBuffer(bp, b)
}

// subscribeMetrics answers GET /v1/metric-groups/{name}/subscribe: the
// group's commits as server-sent events, each with its token as its id.
func (s *Server) subscribeMetrics(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	q := r.URL.Query()
	var opts metricstore.SubscribeOptions
	from := r.Header.Get("Last-Event-ID") // an EventSource reconnecting
	if from == "" {
		from = q.Get("from")
	}
	var err error
	if opts.From, err = metricstore.ParseToken(from); err != nil {
		s.metricStoreError(w, err)
		return
	}
	if v := q.Get("snapshot"); v != "" {
		if opts.Snapshot, err = strconv.ParseBool(v); err != nil {
			writeError(w, http.StatusBadRequest, codeBadRequest, fmt.Sprintf("snapshot=%q: use true or false", v), nil)
			return
		}
	}
	if v := q.Get("metrics"); v != "" {
		opts.Metrics = strings.Split(v, ",")
	}
	if v := q.Get("keys"); v != "" {
		g, err := s.metrics.Definition(name)
		if err != nil {
			s.metricStoreError(w, err)
			return
		}
		if opts.Keys, err = metricstore.ParseKeys(g, []byte(v)); err != nil {
			s.metricStoreError(w, err)
			return
		}
	}
	sub, err := s.metrics.Subscribe(name, opts)
	if err != nil {
		s.metricStoreError(w, err)
		return
	}
	defer sub.Close()

	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	// The server's Close ends the streams, which would otherwise hold its
	// shutdown.
	defer context.AfterFunc(s.streams, cancel)()

	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(parts ...[]byte) bool {
		rc.SetWriteDeadline(time.Now().Add(writeTimeout))
		for _, p := range parts {
			if _, err := w.Write(p); err != nil {
				return false
			}
		}
		return rc.Flush() == nil
	}
	if !send([]byte(": subscribed\n\n")) {
		return
	}
	for {
		hb, stop := context.WithTimeout(ctx, heartbeatInterval)
		ev, err := sub.Next(hb)
		stop()
		if err != nil {
			switch {
			case ctx.Err() != nil:
				if s.streams.Err() != nil {
					send(streamError(codeUnavailable, "the server is shutting down: resume from the last event's id"))
				}
				return
			case errors.Is(err, context.DeadlineExceeded):
				// A heartbeat carries the position, which moves past commits
				// of keys not followed.
				b := []byte("event: heartbeat\n")
				if tok := sub.Token(); !tok.IsZero() {
					b = append(append(append(b, "id: "...), tok.String()...), '\n')
				}
				if !send(append(b, "data: {}\n\n"...)) {
					return
				}
				continue
			}
			code := codeInternal
			var nf *metricstore.NotFoundError
			if errors.As(err, &nf) {
				code = codeNotFound
			} else if errors.Is(err, metricstore.ErrClosed) {
				code = codeUnavailable
			}
			send(streamError(code, err.Error()))
			return
		}
		bp := buffers.Get().(*[]byte)
		b := (*bp)[:0]
		if !ev.Token.IsZero() {
			b = append(append(append(b, "id: "...), ev.Token.String()...), '\n')
		}
		b = append(append(append(b, "event: "...), ev.Kind.String()...), "\ndata: "...)
		// A commit's encoding that all subscribers of every key share is
		// written as it is, not copied.
		shared, err := ev.SharedJSON()
		if err == nil && shared == nil {
			b, err = ev.AppendJSON(b)
		}
		if err != nil {
			s.log.Error("cannot encode a metric store event", "group", name, "error", err)
			send(streamError(codeInternal, err.Error()))
			return
		}
		var ok bool
		if shared != nil {
			ok = send(b, shared, []byte("\n\n"))
		} else {
			b = append(b, "\n\n"...)
			ok = send(b)
		}
		putBuffer(bp, b)
		if !ok {
			return
		}
	}
}

// streamError returns an error event.
func streamError(code, msg string) []byte {
	data, _ := json.Marshal(apiError{Code: code, Message: msg})
	return append(append([]byte("event: error\ndata: "), data...), "\n\n"...)
}

// metricStoreError answers an error of the metric store: 404 for an
// unknown group, 400 for a request it refused, 503 once it is closed.
func (s *Server) metricStoreError(w http.ResponseWriter, err error) {
	var nf *metricstore.NotFoundError
	switch {
	case errors.As(err, &nf):
		writeError(w, http.StatusNotFound, codeNotFound, err.Error(), nil)
	case errors.Is(err, metricstore.ErrInvalid):
		writeError(w, http.StatusBadRequest, codeBadRequest, strings.TrimSuffix(err.Error(), ": "+metricstore.ErrInvalid.Error()), nil)
	case errors.Is(err, metricstore.ErrClosed):
		writeError(w, http.StatusServiceUnavailable, codeUnavailable, err.Error(), nil)
	default:
		s.internal(w, err)
	}
}

// MetricStore returns the server's metric store, which its engine's
// metric groups commit to.
func (s *Server) MetricStore() *metricstore.Store { return s.metrics }
