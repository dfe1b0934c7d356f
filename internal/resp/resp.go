// Package resp is a small Redis client: commands as argument lists, sent
// one at a time or pipelined over a pool of connections, in the RESP2
// protocol that every Redis (and Valkey, KeyDB, miniredis) speaks. It is
// what the redis connector needs and no more, so that the binary does not
// carry a general client with a method for every command.
//
// Invariants: a connection that saw an I/O or protocol error, or whose
// context ended mid-command, is closed, never reused with a reply left
// in it; replies are returned in the order the commands were sent. A
// Client is safe for concurrent use.
package resp

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sluicesql/sluice/internal/suggest"
)

// Options says where the server is and how to talk to it.
type Options struct {
	// Addr is host:port.
	Addr string
	// Username and Password, if set, are sent with AUTH on every new
	// connection (Username only with a Password: Redis 6 ACLs).
	Username, Password string
	// DB, if not 0, is selected on every new connection.
	DB int
	// TLS, if set, wraps connections (rediss:// URLs); the handshake is
	// bounded by DialTimeout.
	TLS *tls.Config
	// DialTimeout bounds connecting (and the AUTH and SELECT that
	// follow); ReadTimeout and WriteTimeout bound each command's reply
	// and request. Zero: 5 s.
	DialTimeout, ReadTimeout, WriteTimeout time.Duration
	// PoolSize is the most idle connections kept (default 4); more may be
	// open at once under load.
	PoolSize int
}

// ParseURL reads redis://[[user]:password@]host[:port][/db] or rediss://
// (TLS). The port defaults to 6379.
func ParseURL(s string) (*Options, error) {
	u, err := url.Parse(s)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // not the URL again: it may hold a password
		}
		return nil, err
	}
	o := &Options{}
	switch u.Scheme {
	case "redis":
	case "rediss":
		o.TLS = &tls.Config{ServerName: u.Hostname(), MinVersion: tls.VersionTLS12}
	default:
		return nil, fmt.Errorf("invalid URL scheme: %q (expected redis or rediss)", u.Scheme)
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		host = "localhost"
	}
	if port == "" {
		port = "6379"
	}
	o.Addr = net.JoinHostPort(host, port)
	if u.User != nil {
		o.Username = u.User.Username()
		o.Password, _ = u.User.Password()
	}
	if u.Fragment != "" || strings.HasSuffix(s, "#") {
		return nil, errors.New("a Redis URL has no fragment (after '#'); a '#' in a password is written %23")
	}
	p := strings.Trim(u.Path, "/")
	if p != "" {
		if o.DB, err = strconv.Atoi(p); err != nil || o.DB < 0 {
			return nil, fmt.Errorf("invalid database number: %q", p)
		}
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return nil, fmt.Errorf("cannot read the URL's query: %v", err)
	}
	for k, v := range q {
		switch {
		case k != "db":
			return nil, fmt.Errorf("unsupported URL parameter %q%s (a Redis URL takes db only)", k, suggest.Hint(k, []string{"db"}))
		case len(v) > 1:
			return nil, fmt.Errorf("URL parameter db is given %d times", len(v))
		case p != "":
			return nil, fmt.Errorf("the database is given twice, as the URL's path (%q) and its parameter db", p)
		}
		if o.DB, err = strconv.Atoi(v[0]); err != nil || o.DB < 0 {
			return nil, fmt.Errorf("invalid database number: %q", v[0])
		}
	}
	return o, nil
}

// Nil is the error of a null reply (GET of a key that does not exist), as
// Reply.Err returns it.
var Nil = errors.New("redis: nil")

// Error is an error reply of the server (-ERR ..., -WRONGTYPE ...).
type Error string

func (e Error) Error() string { return string(e) }

// Reply is a server's reply to one command.
type Reply struct {
	// Kind is the RESP type byte: '+' simple string, '-' error, ':'
	// integer, '$' bulk string, '*' array; a null bulk string or array
	// has Null set.
	Kind  byte
	Null  bool
	Str   string  // '+', '-' (the message) and '$'
	Int   int64   // ':'
	Array []Reply // '*'
}

// Err returns the reply's error: an Error for an error reply, Nil for a
// null one, else nil.
func (r Reply) Err() error {
	switch {
	case r.Kind == '-':
		return Error(r.Str)
	case r.Null:
		return Nil
	}
	return nil
}

// String returns a string reply's text (for '+', '$' and ':').
func (r Reply) String() (string, error) {
	if err := r.Err(); err != nil {
		return "", err
	}
	switch r.Kind {
	case '+', '$':
		return r.Str, nil
	case ':':
		return strconv.FormatInt(r.Int, 10), nil
	}
	return "", fmt.Errorf("redis: unexpected %s reply, expected a string", kindName(r.Kind))
}

// Map returns a flat array reply of field, value pairs (HGETALL) as a
// map.
func (r Reply) Map() (map[string]string, error) {
	if err := r.Err(); err != nil {
		return nil, err
	}
	if r.Kind != '*' || len(r.Array)%2 != 0 {
		return nil, fmt.Errorf("redis: unexpected %s reply, expected field and value pairs", kindName(r.Kind))
	}
	m := make(map[string]string, len(r.Array)/2)
	for i := 0; i < len(r.Array); i += 2 {
		k, err := r.Array[i].String()
		if err != nil {
			return nil, err
		}
		v, err := r.Array[i+1].String()
		if err != nil {
			return nil, err
		}
		m[k] = v
	}
	return m, nil
}

func kindName(k byte) string {
	switch k {
	case '+':
		return "simple string"
	case '-':
		return "error"
	case ':':
		return "integer"
	case '$':
		return "bulk string"
	case '*':
		return "array"
	}
	return fmt.Sprintf("%q", k)
}

// Client sends commands to one server.
type Client struct {
	o      Options
	mu     sync.Mutex
	idle   []*conn
	closed bool
}

// New returns a client of the server o describes; it connects on first
// use.
func New(o Options) *Client {
	for _, d := range []*time.Duration{&o.DialTimeout, &o.ReadTimeout, &o.WriteTimeout} {
		if *d <= 0 {
			*d = 5 * time.Second
		}
	}
	if o.PoolSize <= 0 {
		o.PoolSize = 4
	}
	return &Client{o: o}
}

// Addr returns the server's address.
func (c *Client) Addr() string { return c.o.Addr }

// Do sends one command and returns its reply; an error reply is returned
// as the error (an Error), a null one as Nil with the reply.
func (c *Client) Do(ctx context.Context, args ...string) (Reply, error) {
	rs, err := c.Pipeline(ctx, [][]string{args})
	if err != nil {
		return Reply{}, err
	}
	return rs[0], rs[0].Err()
}

// Pipeline sends the commands in one write and reads their replies, in
// order. An error is the connection's (no reply is then trusted); the
// server's errors are in the replies (Reply.Err).
func (c *Client) Pipeline(ctx context.Context, cmds [][]string) ([]Reply, error) {
	if len(cmds) == 0 {
		return nil, nil
	}
	cn, err := c.get(ctx)
	if err != nil {
		return nil, err
	}
	rs, err := cn.roundTrip(ctx, cmds, c.o.WriteTimeout, c.o.ReadTimeout)
	if err != nil {
		cn.nc.Close()
		return nil, err
	}
	c.put(cn)
	return rs, nil
}

// Close closes the idle connections; those in use close when their
// command ends.
func (c *Client) Close() error {
	c.mu.Lock()
	idle := c.idle
	c.idle, c.closed = nil, true
	c.mu.Unlock()
	for _, cn := range idle {
		cn.nc.Close()
	}
	return nil
}

func (c *Client) get(ctx context.Context) (*conn, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, errors.New("redis: client is closed")
	}
	if n := len(c.idle); n > 0 {
		cn := c.idle[n-1]
		c.idle = c.idle[:n-1]
		c.mu.Unlock()
		return cn, nil
	}
	c.mu.Unlock()
	return c.dial(ctx)
}

func (c *Client) put(cn *conn) {
	c.mu.Lock()
	if !c.closed && len(c.idle) < c.o.PoolSize {
		c.idle = append(c.idle, cn)
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	cn.nc.Close()
}

func (c *Client) dial(ctx context.Context) (*conn, error) {
	ctx, cancel := context.WithTimeout(ctx, c.o.DialTimeout)
	defer cancel()
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", c.o.Addr)
	if err != nil {
		return nil, err
	}
	if c.o.TLS != nil {
		tc := tls.Client(nc, c.o.TLS)
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			return nil, fmt.Errorf("TLS handshake: %w", err)
		}
		nc = tc
	}
	cn := &conn{nc: nc, r: bufio.NewReaderSize(nc, 16<<10), w: bufio.NewWriterSize(nc, 16<<10)}
	var setup [][]string
	switch {
	case c.o.Password != "" && c.o.Username != "":
		setup = append(setup, []string{"AUTH", c.o.Username, c.o.Password})
	case c.o.Password != "":
		setup = append(setup, []string{"AUTH", c.o.Password})
	}
	if c.o.DB != 0 {
		setup = append(setup, []string{"SELECT", strconv.Itoa(c.o.DB)})
	}
	if len(setup) > 0 {
		rs, err := cn.roundTrip(ctx, setup, c.o.DialTimeout, c.o.DialTimeout)
		if err == nil {
			for i, r := range rs {
				if e := r.Err(); e != nil {
					err = fmt.Errorf("%s: %w", setup[i][0], e)
					break
				}
			}
		}
		if err != nil {
			nc.Close()
			return nil, err
		}
	}
	return cn, nil
}

// conn is one connection to the server.
type conn struct {
	nc net.Conn
	r  *bufio.Reader
	w  *bufio.Writer
}

func (cn *conn) roundTrip(ctx context.Context, cmds [][]string, wt, rt time.Duration) ([]Reply, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// The context's end cuts a command short through the deadline.
	stop := context.AfterFunc(ctx, func() { cn.nc.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	deadline := func(d time.Duration) time.Time {
		t := time.Now().Add(d)
		if cd, ok := ctx.Deadline(); ok && cd.Before(t) {
			t = cd
		}
		return t
	}
	cn.nc.SetWriteDeadline(deadline(wt))
	for _, args := range cmds {
		writeCommand(cn.w, args)
	}
	if err := cn.w.Flush(); err != nil {
		return nil, ctxErr(ctx, err)
	}
	cn.nc.SetReadDeadline(deadline(rt))
	rs := make([]Reply, len(cmds))
	for i := range rs {
		r, err := readReply(cn.r, 0)
		if err != nil {
			return nil, ctxErr(ctx, err)
		}
		rs[i] = r
	}
	return rs, nil
}

// ctxErr prefers the context's error to the deadline it caused.
func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

func writeCommand(w *bufio.Writer, args []string) {
	w.WriteByte('*')
	w.WriteString(strconv.Itoa(len(args)))
	w.WriteString("\r\n")
	for _, a := range args {
		w.WriteByte('$')
		w.WriteString(strconv.Itoa(len(a)))
		w.WriteString("\r\n")
		w.WriteString(a)
		w.WriteString("\r\n")
	}
}

// maxDepth bounds the nesting of arrays in a reply; maxBulk the length
// of one bulk string (Redis' own proto-max-bulk-len is 512 MB).
const (
	maxDepth = 32
	maxBulk  = 512 << 20
)

// readReply reads one RESP2 reply.
func readReply(r *bufio.Reader, depth int) (Reply, error) {
	line, err := readLine(r)
	if err != nil {
		return Reply{}, err
	}
	if len(line) == 0 {
		return Reply{}, errors.New("redis: protocol error: empty line")
	}
	kind, rest := line[0], string(line[1:])
	switch kind {
	case '+', '-':
		return Reply{Kind: kind, Str: rest}, nil
	case ':':
		n, err := strconv.ParseInt(rest, 10, 64)
		if err != nil {
			return Reply{}, fmt.Errorf("redis: protocol error: bad integer %q", rest)
		}
		return Reply{Kind: kind, Int: n}, nil
	case '$':
		n, err := strconv.Atoi(rest)
		if err != nil || n < -1 || n > maxBulk {
			return Reply{}, fmt.Errorf("redis: protocol error: bad bulk length %q", rest)
		}
		if n == -1 {
			return Reply{Kind: kind, Null: true}, nil
		}
		var buf []byte
		if n < 64<<10 {
			buf = make([]byte, n+2)
			if _, err := io.ReadFull(r, buf); err != nil {
				return Reply{}, err
			}
		} else {
			// A large length is believed as the bytes come, not before.
			var bb bytes.Buffer
			if _, err := io.CopyN(&bb, r, int64(n)+2); err != nil {
				return Reply{}, err
			}
			buf = bb.Bytes()
		}
		if buf[n] != '\r' || buf[n+1] != '\n' {
			return Reply{}, errors.New("redis: protocol error: bulk string not ended by CRLF")
		}
		return Reply{Kind: kind, Str: string(buf[:n])}, nil
	case '*':
		n, err := strconv.Atoi(rest)
		if err != nil || n < -1 {
			return Reply{}, fmt.Errorf("redis: protocol error: bad array length %q", rest)
		}
		if n == -1 {
			return Reply{Kind: kind, Null: true}, nil
		}
		if depth >= maxDepth {
			return Reply{}, errors.New("redis: protocol error: arrays nested too deep")
		}
		arr := make([]Reply, 0, min(n, 1024))
		for range n {
			e, err := readReply(r, depth+1)
			if err != nil {
				return Reply{}, err
			}
			arr = append(arr, e)
		}
		return Reply{Kind: kind, Array: arr}, nil
	}
	return Reply{}, fmt.Errorf("redis: protocol error: unexpected reply type %q (RESP3 replies are not read)", kind)
}

func readLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, errors.New("redis: protocol error: line too long")
		}
		return nil, err
	}
	if len(line) < 2 || line[len(line)-2] != '\r' {
		return nil, errors.New("redis: protocol error: line not ended by CRLF")
	}
	return line[:len(line)-2], nil
}
