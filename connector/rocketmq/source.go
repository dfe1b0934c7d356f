package rocketmq

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/internal/rmqwire"
	"github.com/sluicesql/sluice/types"
)

// pollWait is the longest a Read waits for a message before it returns
// with none (connector.Reader's contract).
const pollWait = 100 * time.Millisecond

// Source reads a rocketmq table's topic, in one of two modes:
//
//   - receive: a simple consumer of the table's consumer group, one
//     partition. A message is acknowledged once the checkpoint that holds
//     its effect has completed; until then it stays invisible to the
//     group (its invisible duration renewed), and comes again to a
//     restarted job if it never was (at-least-once). Its readers are
//     connector.Resumers only so that their rows' origin offsets keep
//     rising across runs of a job.
//   - offsets: every message queue of the topic is a partition, read by
//     PullMessage from a queue offset; a row's origin offset is its
//     message's queue offset, and a reader resumes after the last one a
//     job's checkpoint covered, so that the job's offset dedup makes the
//     state exactly-once.
type Source struct {
	cfg    *config
	table  connector.Table
	env    connector.Env
	policy *connector.ErrorPolicy
	rows   connector.MessageRows[*message]
	queues []*v2.MessageQueue // offsets mode: the partitions, by broker name then queue ID
}

// CreateSource implements connector.SourceFactory. In offsets mode it asks
// the proxy for the topic's message queues, trying for 'connect.timeout'.
func (Factory) CreateSource(t connector.Table, env connector.Env) (connector.Source, error) {
	c, err := parseConfig(t, env, false)
	if err != nil {
		return nil, err
	}
	s := &Source{cfg: c, table: t, env: env}
	meta, err := metadataFuncs(t)
	if err != nil {
		return nil, err
	}
	if s.policy, err = connector.NewErrorPolicy(t, c.fmtName); err != nil {
		return nil, err
	}
	s.rows = connector.MessageRows[*message]{Table: t, Format: c.format, Options: c.fmtOpts, Policy: s.policy, Meta: meta, Where: where}
	if _, err := s.rows.NewDecoder(0); err != nil {
		return nil, err
	}
	if c.mode == modeOffsets {
		if s.queues, err = s.route(context.Background()); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// route returns the readable queues of the topic, sorted.
func (s *Source) route(ctx context.Context) ([]*v2.MessageQueue, error) {
	c := s.cfg
	rmqwire.QuietClient()
	cc, err := rmqwire.Dial(firstEndpoint(c.endpoints))
	if err != nil {
		return nil, fmt.Errorf("rocketmq table '%s': %w", c.table, err)
	}
	defer cc.Close()
	cl := v2.NewMessagingServiceClient(cc)
	id := c.identityFor("sluice-route-" + strconv.FormatInt(time.Now().UnixNano(), 36))
	deadline := time.Now().Add(c.connectTimeout)
	backoff := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		rctx, cancel := context.WithTimeout(id.Sign(ctx), c.reqTimeout)
		resp, err := cl.QueryRoute(rctx, &v2.QueryRouteRequest{Topic: &v2.Resource{ResourceNamespace: c.namespace, Name: c.topic},
			Endpoints: endpointsOf(c.endpoints)})
		cancel()
		if err == nil && resp.GetStatus().GetCode() != v2.Code_OK {
			err = &statusError{code: int32(resp.GetStatus().GetCode()), msg: resp.GetStatus().GetMessage()}
		}
		if err == nil {
			var qs []*v2.MessageQueue
			for _, q := range resp.GetMessageQueues() {
				if q.GetPermission() == v2.Permission_READ || q.GetPermission() == v2.Permission_READ_WRITE {
					qs = append(qs, q)
				}
			}
			if len(qs) == 0 {
				return nil, fmt.Errorf("rocketmq table '%s': topic '%s' has no readable message queue", c.table, c.topic)
			}
			if len(qs) > connector.MaxPartitions {
				return nil, fmt.Errorf("rocketmq table '%s': topic '%s' has %d message queues, more than the %d partitions a source may have", c.table, c.topic, len(qs), connector.MaxPartitions)
			}
			sort.Slice(qs, func(i, j int) bool {
				a, b := qs[i], qs[j]
				if a.GetBroker().GetName() != b.GetBroker().GetName() {
					return a.GetBroker().GetName() < b.GetBroker().GetName()
				}
				return a.GetId() < b.GetId()
			})
			return qs, nil
		}
		if permanent(err) {
			return nil, fmt.Errorf("rocketmq table '%s': cannot read the route of topic '%s' from %s: %w", c.table, c.topic, c.endpoints, err)
		}
		if time.Now().Add(backoff).After(deadline) {
			return nil, fmt.Errorf("rocketmq table '%s': cannot read the route of topic '%s' from %s within %s ('connect.timeout'): %w", c.table, c.topic, c.endpoints, c.connectTimeout, err)
		}
		if attempt == 1 {
			s.env.Log("rocketmq table '%s': cannot reach %s: %v; retrying for up to %s", c.table, c.endpoints, err, c.connectTimeout)
		}
		time.Sleep(backoff)
		backoff = min(backoff*2, 2*time.Second)
	}
}

// firstEndpoint is the first of 'endpoints' (the proxy's own calls go to
// any; the route names the brokers' endpoints after that).
func firstEndpoint(s string) string {
	for _, e := range splitEndpoints(s) {
		return e
	}
	return s
}

func splitEndpoints(s string) []string {
	var out []string
	for _, e := range strings.Split(s, ";") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// endpointsOf is the protocol's form of 'endpoints'.
func endpointsOf(s string) *v2.Endpoints {
	ep := &v2.Endpoints{Scheme: v2.AddressScheme_DOMAIN_NAME}
	for _, e := range splitEndpoints(s) {
		host, port := e, 80
		if i := strings.LastIndexByte(e, ':'); i >= 0 {
			host = e[:i]
			port, _ = strconv.Atoi(e[i+1:])
		}
		ep.Addresses = append(ep.Addresses, &v2.Address{Host: host, Port: int32(port)})
	}
	return ep
}

// Partitions implements connector.Source: one in receive mode, one per
// message queue in offsets mode.
func (s *Source) Partitions() int {
	if s.cfg.mode == modeOffsets {
		return len(s.queues)
	}
	return 1
}

// Bounded implements connector.Source: with 'scan.bounded.mode' =
// 'latest-offset', each queue is read up to its end when its reader opens.
func (s *Source) Bounded() bool { return s.cfg.bounded }

// Acknowledges implements connector.Acknowledged: in receive mode each
// job acknowledges what it received itself.
func (s *Source) Acknowledges() bool { return s.cfg.mode == modeReceive }

// Identity implements connector.Identified: the endpoints, namespace,
// topic and mode (and the group of a receiving source), not the
// credentials.
func (s *Source) Identity() string { return s.cfg.identity(false) }

// PartitionName implements connector.NamedPartitions: a queue is named by
// its broker and ID, so that a job's positions follow the queues when the
// topic gets more.
func (s *Source) PartitionName(p int) string {
	if s.cfg.mode != modeOffsets {
		return strconv.Itoa(p)
	}
	q := s.queues[p]
	return q.GetBroker().GetName() + "/" + strconv.Itoa(int(q.GetId()))
}

// PartitionVersion implements connector.NamedPartitions: a queue is only
// ever extended.
func (s *Source) PartitionVersion(int) ([]byte, error) { return nil, nil }

// SameVersion implements connector.NamedPartitions.
func (s *Source) SameVersion(int, []byte) bool { return true }

// Skipped returns the malformed messages skipped by all readers so far.
func (s *Source) Skipped() int64 { return s.policy.Skipped() }

// Open implements connector.Source.
func (s *Source) Open(ctx context.Context, p int) (connector.Reader, error) {
	return s.open1(ctx, p, -1)
}

// OpenAfter implements connector.Resumer. In offsets mode, the queue is
// read from the message after offset; in receive mode, the rows read are
// numbered from offset+1 on.
func (s *Source) OpenAfter(ctx context.Context, p int, offset int64) (connector.Reader, error) {
	return s.open1(ctx, p, offset)
}

func (s *Source) open1(ctx context.Context, p int, after int64) (connector.Reader, error) {
	if p < 0 || p >= s.Partitions() {
		return nil, fmt.Errorf("rocketmq: partition %d out of range [0, %d)", p, s.Partitions())
	}
	rows, err := s.rows.NewDecoder(p)
	if err != nil {
		return nil, err
	}
	d := decoder{src: s, rows: rows}
	var r connector.Reader
	if s.cfg.mode == modeOffsets {
		r, err = s.openOffsets(ctx, d, p, after)
	} else {
		r, err = s.openReceive(ctx, d, after)
	}
	if err != nil {
		return nil, err
	}
	s.policy.ReaderOpened()
	return r, nil
}

// decoder turns messages into rows of a partition.
type decoder struct {
	src  *Source
	rows *connector.MessageDecoder[*message]
}

// add decodes m into a row of b with origin offset off, or applies the
// error policy.
func (d *decoder) add(b *types.Batch, m *message, off int64) error {
	return d.rows.Add(b, off, m.body, m)
}

// where locates a message for error messages.
func where(m *message) string {
	s := "topic '" + m.topic + "'"
	if m.queue >= 0 {
		s += " queue " + strconv.Itoa(int(m.queue)) + " offset " + strconv.FormatInt(m.offset, 10)
	}
	return s + " message " + m.id
}

var errReaderClosed = errors.New("the reader is closed")
