package rabbitmq

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/sluicesql/sluice/connector"
)

// permanentError is a failure that connecting again will not mend: bad
// credentials, a virtual host, queue or exchange that does not exist,
// declarations that do not match the broker's.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// classify marks the errors that connecting again will not mend.
func classify(err error) error {
	var te *connector.TLSError
	if errors.As(err, &te) {
		return &permanentError{err}
	}
	var ae *amqp.Error
	if err == nil || !errors.As(err, &ae) {
		return err
	}
	if ae == amqp.ErrCredentials || ae == amqp.ErrVhost || ae == amqp.ErrSASL {
		return &permanentError{err}
	}
	switch ae.Code {
	case amqp.AccessRefused, amqp.NotFound, amqp.PreconditionFailed, amqp.NotAllowed, amqp.NotImplemented,
		amqp.CommandInvalid, amqp.SyntaxError, amqp.FrameError:
		if ae.Server {
			return &permanentError{err}
		}
	}
	return err
}

// describe says what an error means for the table, with a hint for the
// broker's refusals that need one.
func describe(err error, c *config) string {
	var ae *amqp.Error
	if !errors.As(err, &ae) {
		return err.Error()
	}
	s := fmt.Sprintf("%s (AMQP %d)", ae.Reason, ae.Code)
	switch {
	case ae == amqp.ErrCredentials || ae.Code == amqp.AccessRefused && strings.Contains(strings.ToLower(ae.Reason), "login"):
		s += ": the broker refused the user name or password (the 'uri', or 'username' and 'password')"
	case ae == amqp.ErrVhost || ae.Code == amqp.NotAllowed && strings.Contains(strings.ToLower(ae.Reason), "vhost"):
		s += fmt.Sprintf(": virtual host '%s' is not there, or the user may not use it", c.uri.Vhost)
	case ae == amqp.ErrSASL:
		asked := "PLAIN"
		if len(c.auth) > 0 {
			asked = strings.Join(c.auth, ", ") + " (the URI's auth_mechanism)"
		}
		s += ": the broker offers none of the SASL mechanisms asked for: " + asked
	}
	// Keep what the error was wrapped in (what could not be done).
	return strings.Replace(err.Error(), ae.Error(), s, 1)
}

// dial opens a connection to the broker: TCP, the TLS handshake and the
// AMQP handshake within c.dialTimeout, with the SASL mechanisms, channel
// and frame limits and heartbeat the options and the URI ask for.
func dial(ctx context.Context, c *config) (*amqp.Connection, error) {
	timeout := c.dialTimeout
	d := net.Dialer{Timeout: timeout}
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	nc, err := d.DialContext(dctx, "tcp", net.JoinHostPort(c.uri.Host, strconv.Itoa(c.uri.Port)))
	if err != nil {
		return nil, err
	}
	if c.tls != nil {
		tc := tls.Client(nc, c.tls)
		if err := tc.HandshakeContext(dctx); err != nil {
			nc.Close()
			return nil, fmt.Errorf("TLS handshake: %w", connector.ClassifyTLS(err))
		}
		nc = tc
	}
	nc.SetDeadline(time.Now().Add(timeout)) // cleared once the handshake is done
	props := amqp.NewConnectionProperties()
	props.SetClientConnectionName(c.connName)
	props["product"] = "sluice"
	conn, err := amqp.Open(nc, amqp.Config{
		SASL:       c.sasl(),
		Vhost:      c.uri.Vhost,
		Heartbeat:  c.heartbeat,
		ChannelMax: c.channelMax,
		FrameSize:  c.frameMax,
		Properties: props,
		Locale:     "en_US",
	})
	if err != nil {
		nc.Close()
		// A TLS 1.3 server refuses a client's certificate after the
		// client's handshake is done: that refusal comes here, as the
		// text of a frame error (amqp091-go keeps no more of it).
		var ae *amqp.Error
		if c.tls != nil && errors.As(err, &ae) && !ae.Server && strings.HasPrefix(ae.Reason, "remote error: tls: ") {
			err = &net.OpError{Op: "remote error", Net: "tcp", Err: errors.New(strings.TrimPrefix(ae.Reason, "remote error: "))}
		}
		return nil, connector.ClassifyTLS(err)
	}
	return conn, nil
}

// sasl returns the SASL mechanisms to offer, in order: the URI's
// auth_mechanism, else PLAIN.
func (c *config) sasl() []amqp.Authentication {
	if len(c.auth) == 0 {
		return []amqp.Authentication{&amqp.PlainAuth{Username: c.uri.Username, Password: c.uri.Password}}
	}
	var out []amqp.Authentication
	for _, m := range c.auth {
		switch m {
		case "PLAIN":
			out = append(out, &amqp.PlainAuth{Username: c.uri.Username, Password: c.uri.Password})
		case "AMQPLAIN":
			out = append(out, &amqp.AMQPlainAuth{Username: c.uri.Username, Password: c.uri.Password})
		case "EXTERNAL":
			out = append(out, &amqp.ExternalAuth{})
		}
	}
	return out
}

// declare declares what the table's options ask to declare on ch: the
// exchange, the queue (or checks that it exists) and the queue's
// bindings.
func declare(ch *amqp.Channel, c *config, source bool) error {
	if c.declareEx {
		if err := ch.ExchangeDeclare(c.exchange, c.exchangeType, c.exchangeDur, false, false, false, nil); err != nil {
			return fmt.Errorf("cannot declare exchange '%s' ('exchange.declare'): %w", c.exchange, err)
		}
	} else if c.exchange != "" && !source {
		if err := ch.ExchangeDeclarePassive(c.exchange, c.exchangeType, c.exchangeDur, false, false, false, nil); err != nil {
			return fmt.Errorf("exchange '%s' is not there (declare it, or set 'exchange.declare' = 'true'): %w", c.exchange, err)
		}
	}
	if c.queue == "" {
		return nil
	}
	if c.declareQueue {
		if _, err := ch.QueueDeclare(c.queue, c.durable, c.autoDelete, c.exclusive, false, c.queueArgs); err != nil {
			return fmt.Errorf("cannot declare queue '%s' ('queue.declare'; 'queue.durable', 'queue.exclusive', 'queue.auto-delete' and 'queue.arguments' must match a queue that exists): %w", c.queue, err)
		}
	} else if source || c.exchange == "" {
		if _, err := ch.QueueDeclarePassive(c.queue, c.durable, c.autoDelete, c.exclusive, false, nil); err != nil {
			return fmt.Errorf("queue '%s' is not there (declare it, or set 'queue.declare' = 'true'): %w", c.queue, err)
		}
	}
	if c.exchange != "" && (source || c.declareQueue) {
		for _, k := range c.routingKeys {
			if err := ch.QueueBind(c.queue, k, c.exchange, false, nil); err != nil {
				return fmt.Errorf("cannot bind queue '%s' to exchange '%s' with routing key '%s': %w", c.queue, c.exchange, k, err)
			}
		}
	}
	return nil
}

// backoff waits before the next attempt to connect, doubling up to the
// maximum; false when ctx ended first.
func backoff(ctx context.Context, d *time.Duration, c *config) bool {
	t := time.NewTimer(*d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return false
	}
	*d = c.backoff.Next(*d)
	return true
}
