// Package brokerwatch tells a job's log at once when a Kafka client cannot
// reach a broker, and lets a job that starts while its brokers are down
// wait for them for a while.
//
// Left to itself, a Kafka client retries quietly: a broker that is down
// shows as a job that does nothing, and later perhaps as "context
// deadline exceeded". Flink's clients log a warning at the first failed
// connection ("Connection to node ... could not be established"); a Watch
// does the same, naming the address and the reason, and says so again
// once the broker is back.
package brokerwatch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Watch is a kgo hook that reports failed connections to the job's log.
// One Watch may serve several clients (a table's readers): each address
// is reported once until a connection to it succeeds again. It is safe
// for concurrent use.
type Watch struct {
	subject string
	logf    func(format string, args ...any)

	mu   sync.Mutex
	down map[string]bool
}

// New returns a Watch whose lines start with subject ("kafka table
// 'orders'") and go to logf; a nil logf reports nothing.
func New(subject string, logf func(format string, args ...any)) *Watch {
	return &Watch{subject: subject, logf: logf, down: map[string]bool{}}
}

// Opt returns the client option that installs w.
func (w *Watch) Opt() kgo.Opt { return kgo.WithHooks(w) }

// OnBrokerConnect implements kgo.HookBrokerConnect.
func (w *Watch) OnBrokerConnect(meta kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	if w.logf == nil {
		return
	}
	addr := net.JoinHostPort(meta.Host, strconv.Itoa(int(meta.Port)))
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case err != nil && !w.down[addr]:
		w.down[addr] = true
		w.logf("%s: cannot connect to Kafka broker %s (%v); still trying", w.subject, addr, reason(err))
	case err == nil && w.down[addr]:
		delete(w.down, addr)
		w.logf("%s: connected to Kafka broker %s again", w.subject, addr)
	}
}

// reason shortens a dial error to what went wrong ("connect: connection
// refused"), the address being said already.
func reason(err error) error {
	var ne *net.OpError
	if errors.As(err, &ne) && ne.Err != nil {
		return ne.Err
	}
	return err
}

// Unreachable reports whether err is a failure to connect to a broker.
func Unreachable(err error) bool {
	var ne *net.OpError
	return errors.As(err, &ne) && ne.Op == "dial"
}

// Wait calls f until it succeeds, fails for another reason than a broker
// it cannot reach, or timeout has passed since the first call; it then
// returns f's error, naming addrs and, after timeout, setting (the option
// that sets it, for the message). The client retries on its own only
// where it knows more than one broker; a job whose brokers are down when
// it starts (a broker restarting) waits here, as Flink's clients wait for
// default.api.timeout.ms.
func Wait(ctx context.Context, timeout time.Duration, addrs []string, setting string, f func(ctx context.Context) error) error {
	deadline := time.Now().Add(timeout)
	backoff := 100 * time.Millisecond
	for {
		err := f(ctx)
		if err == nil || !Unreachable(err) {
			return err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return fmt.Errorf("cannot connect to Kafka at %s within %v (%s): %w", strings.Join(addrs, ","), timeout, setting, err)
		}
		t := time.NewTimer(min(backoff, left))
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("cannot connect to Kafka at %s: %w (%w)", strings.Join(addrs, ","), ctx.Err(), err)
		case <-t.C:
		}
		backoff = min(2*backoff, time.Second)
	}
}
