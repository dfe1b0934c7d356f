// Package natstest runs an in-process nats-server with JetStream (its
// store in a temporary folder) on a loopback port, for tests: one that
// can be stopped and started again on the same address and store, with
// optional credentials, and helpers to make streams, publish and read
// what a stream holds.
package natstest

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Server is an in-process nats-server.
type Server struct {
	// URL is nats://host:port, or tls://host:port with TLS.
	URL string

	tb   testing.TB
	port int
	dir  string
	user string
	pass string
	tok  string

	tls       *tls.Config // the server's, nil: plain
	clientTLS *tls.Config // Conn's

	mu  sync.Mutex
	srv *server.Server
}

// Option configures a Server.
type Option func(*Server)

// WithUser makes the server accept only the given account.
func WithUser(name, password string) Option {
	return func(s *Server) { s.user, s.pass = name, password }
}

// WithToken makes the server accept only the given token.
func WithToken(tok string) Option {
	return func(s *Server) { s.tok = tok }
}

// WithTLS makes the server require TLS with server (its certificate and,
// for mutual TLS, ClientAuth and ClientCAs); Conn connects with client.
func WithTLS(server, client *tls.Config) Option {
	return func(s *Server) { s.tls, s.clientTLS = server, client }
}

// Start starts a server on a free loopback port, its JetStream store in
// a temporary folder; it stops when the test ends.
func Start(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	s := &Server{tb: tb, port: port, dir: tb.TempDir(), URL: "nats://127.0.0.1:" + strconv.Itoa(port)}
	for _, o := range opts {
		o(s)
	}
	if s.tls != nil {
		s.URL = "tls://127.0.0.1:" + strconv.Itoa(port)
	}
	s.Restart()
	tb.Cleanup(s.Stop)
	return s
}

// Stop stops the server; its JetStream store stays for Restart.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv == nil {
		return
	}
	s.srv.Shutdown()
	s.srv.WaitForShutdown()
	s.srv = nil
}

// Restart starts the server again on the same address and store (it
// must be stopped).
func (s *Server) Restart() {
	s.tb.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	o := &server.Options{Host: "127.0.0.1", Port: s.port, JetStream: true, StoreDir: s.dir, NoLog: true, NoSigs: true,
		Username: s.user, Password: s.pass, Authorization: s.tok}
	if s.tls != nil {
		o.TLSConfig, o.TLSTimeout = s.tls.Clone(), 2
	}
	srv, err := server.NewServer(o)
	if err != nil {
		s.tb.Fatal(err)
	}
	srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		s.tb.Fatal("nats-server did not start")
	}
	s.srv = srv
}

// Conn connects a client, closed when the test ends.
func (s *Server) Conn(tb testing.TB) *nats.Conn {
	tb.Helper()
	var opts []nats.Option
	if s.user != "" {
		opts = append(opts, nats.UserInfo(s.user, s.pass))
	}
	if s.tok != "" {
		opts = append(opts, nats.Token(s.tok))
	}
	if s.clientTLS != nil {
		opts = append(opts, nats.Secure(s.clientTLS))
	}
	nc, err := nats.Connect(s.URL, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(nc.Close)
	return nc
}

// JetStream returns a JetStream client on a new connection.
func (s *Server) JetStream(tb testing.TB) jetstream.JetStream {
	tb.Helper()
	js, err := jetstream.New(s.Conn(tb))
	if err != nil {
		tb.Fatal(err)
	}
	return js
}

// CreateStream makes a file-backed stream of the given subjects.
func CreateStream(tb testing.TB, js jetstream.JetStream, cfg jetstream.StreamConfig) jetstream.Stream {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := js.CreateStream(ctx, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return st
}

// Publish publishes payloads to subject on a JetStream stream, waiting
// for each acknowledgement.
func Publish(tb testing.TB, js jetstream.JetStream, subject string, payloads ...string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, p := range payloads {
		if _, err := js.Publish(ctx, subject, []byte(p)); err != nil {
			tb.Fatal(err)
		}
	}
}

// Message is a message read from a stream.
type Message struct {
	Seq     uint64
	Subject string
	Data    string
	Header  nats.Header
}

// ReadStream returns every message stream holds, in order.
func ReadStream(tb testing.TB, js jetstream.JetStream, stream string) []Message {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, stream)
	if err != nil {
		tb.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	var out []Message
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if err != nil {
			if err == jetstream.ErrMsgNotFound {
				continue
			}
			tb.Fatal(fmt.Errorf("stream %s sequence %d: %w", stream, seq, err))
		}
		out = append(out, Message{Seq: m.Sequence, Subject: m.Subject, Data: string(m.Data), Header: m.Header})
	}
	return out
}

// Subscribers is the number of client subscriptions to subject (as
// written by the subscriber, wildcards and all).
func (s *Server) Subscribers(subject string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv == nil {
		return 0
	}
	cz, err := s.srv.Connz(&server.ConnzOptions{SubscriptionsDetail: true})
	if err != nil {
		return 0
	}
	n := 0
	for _, c := range cz.Conns {
		for _, d := range c.SubsDetail {
			if d.Subject == subject {
				n++
			}
		}
	}
	return n
}
