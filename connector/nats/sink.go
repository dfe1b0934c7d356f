package nats

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/types"
)

// maxInFlight bounds the JetStream messages published and not yet
// acknowledged; a publish beyond it waits.
const maxInFlight = 4096

// Sink publishes rows to a subject, one message a row.
//
//   - Core NATS ('at-most-once'): each row is published as written; Flush
//     makes the server confirm it has them (a round trip). Subscribers
//     that are away miss them, and a replay after a crash publishes again.
//   - JetStream 'at-least-once', or 'exactly-once' in a job without
//     checkpoints: rows are published as written and Flush (every
//     checkpoint) waits until the stream has acknowledged each one; what
//     was not acknowledged is published again, so a crash or a lost
//     acknowledgement can duplicate.
//   - JetStream 'exactly-once' in a job with checkpoints: a
//     connector.StatefulSink. The rows of each checkpoint are held (in
//     memory, and in the checkpoint's state once prepared) and published
//     only when the checkpoint has completed, each with a message ID
//     (header Nats-Msg-Id) made of the sink's run nonce, the checkpoint's
//     number and the row's place in it: the same in a run that restores
//     the checkpoint and publishes them again, so that the stream drops
//     what it already has. That holds within the stream's duplicate window
//     (its 'duplicate_window', 2 minutes by default), counted from the
//     first publish.
type Sink struct {
	cfg   *config
	table connector.Table
	env   connector.Env
	enc   format.Encoder

	cn      *conn
	js      jetstream.JetStream
	payload []byte

	restored bool
	hold     bool   // exactly-once with checkpoints: rows wait for their checkpoint
	nonce    string // names this run's messages (and a restored run's)
	epoch    uint64 // the number of the checkpoint the rows being written belong to
	cur      [][]byte
	prepared []epochRows
	window   time.Duration // the stream's duplicate window, once known

	inflight []jetstream.PubAckFuture // published, not yet acknowledged (not holding)
	dups     int64
}

// epochRows are the messages of one checkpoint, prepared and not yet
// known to be published.
type epochRows struct {
	epoch    uint64
	prepared int64 // Unix ms, to tell whether a republish is within the duplicate window
	msgs     [][]byte
}

// CreateSink implements connector.SinkFactory. Nothing connects before
// the first write: building a plan builds sinks it never writes with.
func (Factory) CreateSink(t connector.Table, env connector.Env) (connector.Sink, error) {
	c, err := parseConfig(t, env, true)
	if err != nil {
		return nil, err
	}
	if err := connector.RejectMetadata("nats", t); err != nil {
		return nil, err
	}
	enc, err := c.format.NewEncoder(t.Schema, c.fmtOpts)
	if err != nil {
		return nil, err
	}
	s := &Sink{cfg: c, table: t, env: env, enc: enc}
	if c.jetStream() {
		return &StatefulSink{s}, nil
	}
	return s, nil
}

// StatefulSink is a JetStream sink: a connector.StatefulSink, which
// holds rows for exactly-once delivery only where the job takes
// checkpoints.
type StatefulSink struct{ *Sink }

// Identity implements connector.Identified.
func (s *Sink) Identity() string { return s.cfg.identity() }

// CommitEvery implements connector.SelfCommitting: in a job without
// checkpoints, acknowledgements are awaited about every second.
func (s *StatefulSink) CommitEvery() time.Duration { return time.Second }

// start connects, once.
func (s *Sink) start(ctx context.Context) error {
	if s.cn != nil {
		return s.cn.err()
	}
	cn, err := dialConn(ctx, s.cfg, s.env)
	if err != nil {
		return err
	}
	s.cn = cn
	if !s.cfg.jetStream() {
		return nil
	}
	s.js, err = jetstream.New(cn.nc, jetstream.WithPublishAsyncMaxPending(maxInFlight),
		jetstream.WithPublishAsyncTimeout(s.cfg.flushWait))
	if err != nil {
		return err
	}
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	st, err := s.js.Stream(rctx, s.cfg.stream)
	if err != nil {
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			return fmt.Errorf("nats table '%s': %s has no stream '%s' ('jetstream.stream'); create it first (e.g. nats stream add)", s.table.Name, s.cfg.server, s.cfg.stream)
		}
		return fmt.Errorf("nats table '%s': cannot look up stream '%s' on %s: %w", s.table.Name, s.cfg.stream, s.cfg.server, err)
	}
	cfg := st.CachedInfo().Config
	s.window = cfg.Duplicates
	if len(cfg.Subjects) == 0 {
		cfg.Subjects = []string{cfg.Name} // a stream without subjects takes its name
	}
	for _, f := range cfg.Subjects {
		if subjectMatches(f, s.cfg.subjects[0]) {
			return nil
		}
	}
	return fmt.Errorf("nats table '%s': stream '%s' does not take subject '%s' (its subjects: %s)", s.table.Name, s.cfg.stream, s.cfg.subjects[0], strings.Join(cfg.Subjects, ", "))
}

// Restore implements connector.StatefulSink: what a checkpoint prepared
// and may not have published is published again, with the same IDs.
func (s *StatefulSink) Restore(ctx context.Context, r connector.SinkRestore) error {
	s.restored = true
	s.hold = s.cfg.guarantee == exactlyOnce && r.Checkpointed
	if s.cfg.guarantee == exactlyOnce && !r.Checkpointed {
		s.env.Log("nats table '%s': the job takes no checkpoints with durable state: the sink publishes at least once", s.table.Name)
	}
	if r.Snapshot != nil && s.hold {
		if err := s.decode(r.Snapshot); err != nil {
			return fmt.Errorf("nats table '%s': cannot read its checkpointed state: %w", s.table.Name, err)
		}
		if len(s.prepared) > 0 {
			if err := s.start(ctx); err != nil {
				return err
			}
			oldest := time.UnixMilli(s.prepared[0].prepared)
			if s.window > 0 && time.Since(oldest) > s.window {
				s.env.Log("nats table '%s': publishing again what checkpoint %d prepared %s ago, beyond stream '%s''s duplicate window (%s): messages it already has are duplicated",
					s.table.Name, s.prepared[0].epoch, time.Since(oldest).Round(time.Second), s.cfg.stream, s.window)
			}
			before := s.dups
			if err := s.Commit(ctx); err != nil {
				return err
			}
			s.env.Log("nats table '%s': published again the rows of the last checkpoint (%d already in the stream)", s.table.Name, s.dups-before)
		}
		return nil
	}
	var b [8]byte
	rand.Read(b[:])
	s.nonce = hex.EncodeToString(b[:])
	s.epoch = 1
	return nil
}

// Write implements connector.Sink.
func (s *Sink) Write(ctx context.Context, b *types.Batch) error {
	if err := s.start(ctx); err != nil {
		return err
	}
	for i := range b.Rows {
		var err error
		s.payload, err = s.enc.Encode(s.payload[:0], b.Rows[i])
		if err != nil {
			return fmt.Errorf("nats table '%s': cannot encode a row: %w", s.table.Name, err)
		}
		switch {
		case !s.cfg.jetStream():
			if err := s.cn.nc.Publish(s.cfg.subjects[0], s.payload); err != nil {
				return s.publishErr(err)
			}
		case s.hold:
			s.cur = append(s.cur, append([]byte(nil), s.payload...))
		default:
			f, err := s.js.PublishMsgAsync(&nats.Msg{Subject: s.cfg.subjects[0], Data: append([]byte(nil), s.payload...)},
				jetstream.WithExpectStream(s.cfg.stream))
			if err != nil {
				return s.publishErr(err)
			}
			s.inflight = append(s.inflight, f)
			if len(s.inflight) >= maxInFlight {
				if err := s.awaitAcks(ctx); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (s *Sink) publishErr(err error) error {
	if cerr := s.cn.err(); cerr != nil {
		return cerr
	}
	return fmt.Errorf("nats table '%s': cannot publish to '%s' on %s: %w", s.table.Name, s.cfg.subjects[0], s.cfg.server, err)
}

// Flush implements connector.Sink: core NATS has the server confirm it
// got what was published; JetStream waits for the stream's
// acknowledgements of what was published (rows held for a checkpoint
// are not published before it completes).
func (s *Sink) Flush(ctx context.Context) error {
	if s.cn == nil {
		return nil
	}
	if err := s.cn.err(); err != nil {
		return err
	}
	if !s.cfg.jetStream() {
		if err := s.cn.nc.FlushTimeout(s.cfg.flushWait); err != nil {
			return fmt.Errorf("nats table '%s': %s did not confirm what was published within %s ('sink.flush-timeout'): %w", s.table.Name, s.cfg.server, s.cfg.flushWait, err)
		}
		return nil
	}
	return s.awaitAcks(ctx)
}

// awaitAcks waits for the acknowledgements of the messages in flight and
// publishes again those that were not acknowledged (lost with a
// connection, or timed out), until 'sink.flush-timeout' has passed.
func (s *Sink) awaitAcks(ctx context.Context) error {
	deadline := time.Now().Add(s.cfg.flushWait)
	backoff := s.cfg.backoff.Initial
	for len(s.inflight) > 0 {
		var retry []*nats.Msg
		var last error
		for _, f := range s.inflight {
			ack, err := s.await(ctx, f, deadline)
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			if err != nil {
				if !retryablePub(err) {
					return s.refused(err)
				}
				retry = append(retry, f.Msg())
				last = err
				continue
			}
			if ack.Duplicate {
				s.dups++
			}
		}
		clear(s.inflight)
		s.inflight = s.inflight[:0]
		if len(retry) == 0 {
			return nil
		}
		if time.Now().Add(backoff).After(deadline) {
			return fmt.Errorf("nats table '%s': stream '%s' did not acknowledge %d messages within %s ('sink.flush-timeout'): %w",
				s.table.Name, s.cfg.stream, len(retry), s.cfg.flushWait, last)
		}
		s.env.Log("nats table '%s': %d messages not acknowledged (%v); publishing them again", s.table.Name, len(retry), last)
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		backoff = s.cfg.backoff.Next(backoff)
		for _, m := range retry {
			f, err := s.js.PublishMsgAsync(&nats.Msg{Subject: m.Subject, Header: m.Header, Data: m.Data})
			if err != nil {
				if cerr := s.cn.err(); cerr != nil {
					return cerr
				}
				f = failedFuture(m, err)
			}
			s.inflight = append(s.inflight, f)
		}
	}
	return nil
}

// await waits for one acknowledgement, until deadline.
func (s *Sink) await(ctx context.Context, f jetstream.PubAckFuture, deadline time.Time) (*jetstream.PubAck, error) {
	t := time.NewTimer(max(time.Until(deadline), time.Millisecond))
	defer t.Stop()
	select {
	case ack := <-f.Ok():
		return ack, nil
	case err := <-f.Err():
		return nil, err
	case <-t.C:
		return nil, nats.ErrTimeout
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// retryablePub reports whether a publish may succeed if made again.
func retryablePub(err error) bool {
	return errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrNoResponders) ||
		errors.Is(err, jetstream.ErrAsyncPublishTimeout) || errors.Is(err, nats.ErrConnectionReconnecting) ||
		errors.Is(err, nats.ErrDisconnected) || errors.Is(err, jetstream.ErrNoStreamResponse)
}

func (s *Sink) refused(err error) error {
	if cerr := s.cn.err(); cerr != nil {
		return cerr
	}
	return fmt.Errorf("nats table '%s': stream '%s' refused a message published to '%s': %w", s.table.Name, s.cfg.stream, s.cfg.subjects[0], err)
}

// failedFuture is a publish that failed at once, to be retried as one
// whose acknowledgement did not come.
type failedPub struct {
	m   *nats.Msg
	err chan error
}

func failedFuture(m *nats.Msg, err error) jetstream.PubAckFuture {
	f := &failedPub{m: m, err: make(chan error, 1)}
	f.err <- err
	return f
}

func (f *failedPub) Ok() <-chan *jetstream.PubAck { return nil }
func (f *failedPub) Err() <-chan error            { return f.err }
func (f *failedPub) Msg() *nats.Msg               { return f.m }

// Prepare implements connector.Committer: held rows become the
// checkpoint's (in its state); otherwise as Flush.
func (s *StatefulSink) Prepare(ctx context.Context) error {
	if !s.hold {
		return s.Flush(ctx)
	}
	if len(s.cur) > 0 {
		s.prepared = append(s.prepared, epochRows{epoch: s.epoch, prepared: time.Now().UnixMilli(), msgs: s.cur})
		s.cur = nil
	}
	s.epoch++
	return nil
}

// Commit implements connector.Committer: the checkpoint completed, so
// the rows it holds are published, with their IDs, and acknowledged.
func (s *StatefulSink) Commit(ctx context.Context) error {
	if !s.hold {
		return s.Flush(ctx)
	}
	if len(s.prepared) == 0 {
		return nil
	}
	if err := s.start(ctx); err != nil {
		return err
	}
	for _, e := range s.prepared {
		for i, data := range e.msgs {
			m := &nats.Msg{Subject: s.cfg.subjects[0], Data: data, Header: nats.Header{}}
			m.Header.Set(jetstream.MsgIDHeader, s.nonce+"."+strconv.FormatUint(e.epoch, 10)+"."+strconv.Itoa(i))
			f, err := s.js.PublishMsgAsync(m, jetstream.WithExpectStream(s.cfg.stream))
			if err != nil {
				if cerr := s.cn.err(); cerr != nil {
					return cerr
				}
				f = failedFuture(m, err)
			}
			s.inflight = append(s.inflight, f)
			if len(s.inflight) >= maxInFlight {
				if err := s.awaitAcks(ctx); err != nil {
					return err
				}
			}
		}
	}
	if err := s.awaitAcks(ctx); err != nil {
		return err
	}
	clear(s.prepared)
	s.prepared = s.prepared[:0]
	return nil
}

// Snapshot implements connector.StatefulSink: the run's nonce, the next
// checkpoint's number and the rows prepared and not yet published.
func (s *StatefulSink) Snapshot() ([]byte, error) {
	b := []byte{snapshotVersion}
	b = binary.AppendUvarint(b, uint64(len(s.nonce)))
	b = append(b, s.nonce...)
	b = binary.AppendUvarint(b, s.epoch)
	b = binary.AppendUvarint(b, uint64(len(s.prepared)))
	for _, e := range s.prepared {
		b = binary.AppendUvarint(b, e.epoch)
		b = binary.AppendVarint(b, e.prepared)
		b = binary.AppendUvarint(b, uint64(len(e.msgs)))
		for _, m := range e.msgs {
			b = binary.AppendUvarint(b, uint64(len(m)))
			b = append(b, m...)
		}
	}
	return b, nil
}

const snapshotVersion = 1

// decode reads what Snapshot wrote.
func (s *Sink) decode(b []byte) error {
	bad := errors.New("truncated or corrupt")
	if len(b) == 0 || b[0] != snapshotVersion {
		return fmt.Errorf("unknown version %v", b[:min(len(b), 1)])
	}
	b = b[1:]
	uv := func() (uint64, bool) {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, false
		}
		b = b[n:]
		return v, true
	}
	bytesOf := func() ([]byte, bool) {
		n, ok := uv()
		if !ok || n > uint64(len(b)) {
			return nil, false
		}
		v := b[:n:n]
		b = b[n:]
		return v, true
	}
	nonce, ok := bytesOf()
	if !ok {
		return bad
	}
	s.nonce = string(nonce)
	if s.epoch, ok = uv(); !ok {
		return bad
	}
	n, ok := uv()
	if !ok || n > uint64(len(b)) {
		return bad
	}
	s.prepared = nil
	for range n {
		var e epochRows
		if e.epoch, ok = uv(); !ok {
			return bad
		}
		v, k := binary.Varint(b)
		if k <= 0 {
			return bad
		}
		b = b[k:]
		e.prepared = v
		m, ok := uv()
		if !ok || m > uint64(len(b)) {
			return bad
		}
		for range m {
			msg, ok := bytesOf()
			if !ok {
				return bad
			}
			e.msgs = append(e.msgs, msg)
		}
		s.prepared = append(s.prepared, e)
	}
	if len(b) != 0 {
		return bad
	}
	return nil
}

// Close implements connector.Sink: what was published is awaited; rows
// held for a checkpoint that did not complete are dropped (the job
// replays them).
func (s *Sink) Close() error {
	if s.cn == nil {
		return nil
	}
	var err error
	if s.cn.err() == nil && (!s.cfg.jetStream() || !s.hold) {
		err = s.Flush(context.Background())
	}
	s.cn.close()
	return err
}
