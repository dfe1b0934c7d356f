package nats

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sluicesql/sluice/connector"
)

// conn is a connection to the table's servers. nats.go reconnects by
// itself, with the table's back-off; conn counts and logs it, and records
// why the connection closed for good (credentials refused on
// reconnection), for the reader or sink to fail with.
type conn struct {
	nc *nats.Conn

	mu     sync.Mutex
	closed error // why the connection closed, if it did by itself
	async  error // a permission violation reported asynchronously
	done   chan struct{}
}

// dialConn connects with back-off for 'connect.timeout'; a refusal that
// will not change (credentials, a missing creds file) fails at once.
func dialConn(ctx context.Context, c *config, env connector.Env) (*conn, error) {
	cn := &conn{done: make(chan struct{})}
	what := fmt.Sprintf("nats table '%s'", c.table)
	opts := []nats.Option{
		nats.Name(c.clientName),
		nats.Timeout(min(max(c.connectTimeout, time.Second), 10*time.Second)),
		nats.MaxReconnects(-1),
		nats.CustomReconnectDelay(func(attempts int) time.Duration {
			d := c.backoff.Initial
			for i := 1; i < attempts && d < c.backoff.Max; i++ {
				d = c.backoff.Next(d)
			}
			return d
		}),
		nats.DisconnectErrHandler(func(nc *nats.Conn, err error) {
			if err != nil {
				env.Log("%s: lost the connection to %s: %v; reconnecting", what, c.server, err)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			env.CountReconnect()
			env.Log("%s: connected to %s again", what, nc.ConnectedUrlRedacted())
		}),
		nats.ClosedHandler(func(nc *nats.Conn) {
			cn.mu.Lock()
			if err := nc.LastError(); err != nil && cn.closed == nil {
				cn.closed = fmt.Errorf("%s: the connection to %s closed: %w", what, c.server, err)
			}
			cn.mu.Unlock()
			close(cn.done)
		}),
		nats.ErrorHandler(func(nc *nats.Conn, sub *nats.Subscription, err error) {
			if errors.Is(err, nats.ErrPermissionViolation) || strings.Contains(err.Error(), "Permissions Violation") {
				cn.mu.Lock()
				if cn.async == nil {
					cn.async = fmt.Errorf("%s: %s refused: %w", what, c.server, err)
				}
				cn.mu.Unlock()
			}
			env.Log("%s: %v", what, err)
		}),
	}
	if c.tls != nil {
		opts = append(opts, nats.Secure(c.tls))
	}
	switch {
	case c.user != "":
		opts = append(opts, nats.UserInfo(c.user, c.password))
	case c.token != "":
		opts = append(opts, nats.Token(c.token))
	case c.creds != "":
		opts = append(opts, nats.UserCredentials(c.creds))
	}
	backoff := c.backoff.Initial
	deadline := time.Now().Add(c.connectTimeout)
	for attempt := 1; ; attempt++ {
		nc, err := nats.Connect(strings.Join(c.servers, ","), opts...)
		if err == nil {
			cn.nc = nc
			if attempt > 1 {
				env.Log("%s: connected to %s after %d attempts", what, c.server, attempt)
			}
			return cn, nil
		}
		err = connector.ClassifyTLS(err)
		if !retryable(err) {
			return nil, fmt.Errorf("%s: cannot connect to %s: %w", what, c.server, err)
		}
		if time.Now().Add(backoff).After(deadline) {
			return nil, fmt.Errorf("%s: cannot connect to %s within %s ('connect.timeout'): %w", what, c.server, c.connectTimeout, err)
		}
		if attempt == 1 {
			env.Log("%s: cannot connect to %s: %v; retrying for up to %s", what, c.server, err, c.connectTimeout)
		}
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
		backoff = c.backoff.Next(backoff)
	}
}

// retryable reports whether a failed connection may succeed later: the
// servers could not be reached, rather than refused the client.
func retryable(err error) bool {
	var te *connector.TLSError
	if errors.As(err, &te) {
		return false
	}
	var ne net.Error
	return errors.Is(err, nats.ErrNoServers) || errors.Is(err, nats.ErrTimeout) || errors.As(err, &ne)
}

// err returns why the connection failed for good, if it did.
func (cn *conn) err() error {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if cn.async != nil {
		return cn.async
	}
	return cn.closed
}

// close closes the connection (a no-op when it closed by itself).
func (cn *conn) close() {
	if cn != nil && cn.nc != nil {
		cn.nc.Close()
	}
}
