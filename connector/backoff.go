package connector

import (
	"fmt"
	"time"
)

// Backoff is the wait between attempts at something that keeps failing
// (connecting, sending): Initial after the first failure, doubling with
// each further one up to Max.
type Backoff struct {
	Initial, Max time.Duration
}

// Next returns the wait that follows a wait of d: twice d, at most Max.
func (b Backoff) Next(d time.Duration) time.Duration { return min(2*d, b.Max) }

// The options of a connector that connects again, with back-off, after
// losing its connection (mqtt, nats, rabbitmq).
const (
	ReconnectInitialBackoffOption = "reconnect.initial-backoff"
	ReconnectMaxBackoffOption     = "reconnect.max-backoff"
)

// ReconnectBackoff returns the back-off between attempts to connect
// again that the options 'reconnect.initial-backoff' and
// 'reconnect.max-backoff' give: 100 ms and 30 s when not set.
func (o Options) ReconnectBackoff() (Backoff, error) {
	return o.Backoff(ReconnectInitialBackoffOption, ReconnectMaxBackoffOption,
		Backoff{Initial: 100 * time.Millisecond, Max: 30 * time.Second})
}

// Backoff returns the back-off that the duration options initialKey and
// maxKey give, def's for those not set. Both must be positive, the first
// no larger than the second.
func (o Options) Backoff(initialKey, maxKey string, def Backoff) (Backoff, error) {
	var b Backoff
	var err error
	if b.Initial, err = o.Duration(initialKey, def.Initial); err != nil {
		return Backoff{}, err
	}
	if b.Max, err = o.Duration(maxKey, def.Max); err != nil {
		return Backoff{}, err
	}
	if b.Initial <= 0 || b.Max < b.Initial {
		return Backoff{}, fmt.Errorf("options '%s' (%s) and '%s' (%s) must be positive, the first no larger", initialKey, b.Initial, maxKey, b.Max)
	}
	return b, nil
}
