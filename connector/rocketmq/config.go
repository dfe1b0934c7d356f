package rocketmq

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	rmq "github.com/apache/rocketmq-clients/golang/v5"
	"github.com/apache/rocketmq-clients/golang/v5/credentials"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/internal/rmqwire"
)

// options both the source and the sink read.
var commonOptions = []string{
	"connector", "endpoints", "topic", "tag", "namespace", "access-key", "secret-key", "format",
	"request-timeout", "connect.timeout",
}

var sourceOptions = []string{
	"consumer-group", "scan.mode", "scan.invisible-duration", "scan.receive.batch-size", "scan.receive.await",
	"scan.startup.mode", "scan.startup.timestamp-millis", "scan.pull.batch-size", "scan.bounded.mode",
}

var sinkOptions = []string{
	"sink.delivery-guarantee", "sink.keys-column", "sink.max-inflight", "sink.parallelism",
}

// Source modes ('scan.mode').
const (
	modeReceive = "receive"
	modeOffsets = "offsets"
)

// Startup modes of the offsets mode ('scan.startup.mode').
const (
	startEarliest  = "earliest-offset"
	startLatest    = "latest-offset"
	startTimestamp = "timestamp"
)

// config is what a table's options say.
type config struct {
	table          string
	endpoints      string // as written
	topic          string
	tag            string // source: a tag filter expression; sink: the messages' tag ("" none)
	namespace      string
	accessKey      string
	secretKey      string
	reqTimeout     time.Duration
	connectTimeout time.Duration

	fmtName string
	format  format.Factory
	fmtOpts map[string]string

	// source
	group      string
	mode       string
	invisible  time.Duration
	recvBatch  int32
	await      time.Duration
	startMode  string
	startMilli int64
	pullBatch  int32
	bounded    bool // 'scan.bounded.mode' = 'latest-offset'

	// sink
	exactlyOnce bool
	keysCol     int // -1 without
	maxInflight int
}

// parseConfig reads t's options for a source (sink false) or a sink.
func parseConfig(t connector.Table, env connector.Env, sink bool) (*config, error) {
	o := t.Options
	c := &config{table: t.Name, keysCol: -1}
	var err error
	if c.fmtName, err = o.Required("format"); err != nil {
		return nil, err
	}
	known := append(append([]string{}, commonOptions...), connector.ErrorPolicyOptions()...)
	if sink {
		known = append(known, sinkOptions...)
	} else {
		known = append(known, sourceOptions...)
	}
	if err := o.CheckKnown("rocketmq", known, c.fmtName+"."); err != nil {
		_, group := o["consumer-group"]
		if !sink && o.HasPrefix("sink.") || sink && (o.HasPrefix("scan.") || group) {
			return nil, fmt.Errorf("%w (a %s table takes the %s options)", err, map[bool]string{true: "sink", false: "source"}[sink],
				map[bool]string{true: "'sink.'", false: "'scan.' and 'consumer-group'"}[sink])
		}
		return nil, err
	}
	if env.Formats == nil {
		return nil, errors.New("rocketmq: no format registry")
	}
	if c.format, err = env.Formats.Lookup(c.fmtName); err != nil {
		return nil, err
	}
	if format.IsChangelog(c.format) {
		return nil, fmt.Errorf("rocketmq: format '%s' is a changelog format; a rocketmq table is append-only: use json, csv or raw", c.fmtName)
	}
	c.fmtOpts = o.WithPrefix(c.fmtName + ".")

	if c.endpoints, err = o.Required("endpoints"); err != nil {
		return nil, fmt.Errorf("%w (the proxy's gRPC address, e.g. '127.0.0.1:8081')", err)
	}
	if err := checkEndpoints(c.endpoints); err != nil {
		return nil, err
	}
	if c.topic, err = o.Required("topic"); err != nil {
		return nil, err
	}
	if err := checkName("topic", c.topic); err != nil {
		return nil, err
	}
	c.namespace = o["namespace"]
	c.accessKey, c.secretKey = o["access-key"], o["secret-key"]
	if (c.accessKey == "") != (c.secretKey == "") {
		return nil, errors.New("options 'access-key' and 'secret-key' go together: set both or neither")
	}
	if c.reqTimeout, err = o.Duration("request-timeout", 3*time.Second); err != nil {
		return nil, err
	}
	if c.reqTimeout < 100*time.Millisecond {
		return nil, fmt.Errorf("option 'request-timeout' must be at least 100 ms, not %s", c.reqTimeout)
	}
	if c.connectTimeout, err = o.PositiveDuration("connect.timeout", 30*time.Second); err != nil {
		return nil, err
	}
	if sink {
		return c, c.parseSink(t)
	}
	return c, c.parseSource(t, env)
}

// checkEndpoints checks 'endpoints': host:port, several separated by ';'.
func checkEndpoints(s string) error {
	n := 0
	for _, e := range strings.Split(s, ";") {
		if e = strings.TrimSpace(e); e == "" {
			continue
		}
		n++
		host, port, err := net.SplitHostPort(e)
		if err != nil || host == "" || strings.Contains(e, "/") {
			return fmt.Errorf("option 'endpoints': '%s' is not host:port (e.g. '127.0.0.1:8081'; several separated by ';')", e)
		}
		if p, err := strconv.Atoi(port); err != nil || p <= 0 || p > 65535 {
			return fmt.Errorf("option 'endpoints': '%s' has no valid port", e)
		}
	}
	if n == 0 {
		return errors.New("option 'endpoints' names no endpoint")
	}
	return nil
}

// checkName checks a topic or group name as RocketMQ does: letters,
// digits, '%', '-' and '_', at most 127 characters.
func checkName(what, s string) error {
	if len(s) > 127 {
		return fmt.Errorf("option '%s': '%s' is longer than 127 characters", what, s)
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '%' || r == '-' || r == '_') {
			return fmt.Errorf("option '%s': '%s' may hold only letters, digits, '%%', '-' and '_'", what, s)
		}
	}
	return nil
}

func (c *config) parseSource(t connector.Table, env connector.Env) error {
	o := t.Options
	var err error
	c.tag = strings.TrimSpace(o.String("tag", "*"))
	if c.tag == "" {
		c.tag = "*"
	}
	switch c.mode = o.String("scan.mode", modeReceive); c.mode {
	case modeReceive, modeOffsets:
	default:
		return fmt.Errorf("option 'scan.mode' must be '%s' or '%s', not '%s'", modeReceive, modeOffsets, c.mode)
	}
	c.group = o["consumer-group"]
	if c.group == "" {
		if c.mode == modeReceive {
			return errors.New("option 'consumer-group' is required ('scan.mode' = 'receive' consumes as a consumer group)")
		}
		h := sha256.Sum256([]byte(env.Job + "\x00" + t.Name + "\x00" + c.endpoints + "\x00" + c.topic))
		c.group = "sluice-" + hex.EncodeToString(h[:6])
	} else if err := checkName("consumer-group", c.group); err != nil {
		return err
	}
	if c.invisible, err = o.Duration("scan.invisible-duration", 30*time.Second); err != nil {
		return err
	}
	if c.invisible < time.Second || c.invisible > 12*time.Hour {
		return fmt.Errorf("option 'scan.invisible-duration' must be between 1 s and 12 h, not %s", c.invisible)
	}
	n, err := o.Int("scan.receive.batch-size", 32)
	if err != nil {
		return err
	}
	if n < 1 || n > 1024 {
		return fmt.Errorf("option 'scan.receive.batch-size' must be between 1 and 1024, not %d", n)
	}
	c.recvBatch = int32(n)
	if c.await, err = o.Duration("scan.receive.await", 5*time.Second); err != nil {
		return err
	}
	if c.await < 0 || c.await > 30*time.Second {
		return fmt.Errorf("option 'scan.receive.await' must be between 0 and 30 s, not %s", c.await)
	}
	if n, err = o.Int("scan.pull.batch-size", 256); err != nil {
		return err
	}
	if n < 1 || n > 4096 {
		return fmt.Errorf("option 'scan.pull.batch-size' must be between 1 and 4096, not %d", n)
	}
	c.pullBatch = int32(n)
	c.startMode = o.String("scan.startup.mode", startEarliest)
	switch c.startMode {
	case startEarliest, startLatest:
	case startTimestamp:
		v, err := o.Required("scan.startup.timestamp-millis")
		if err != nil {
			return fmt.Errorf("'scan.startup.mode' = 'timestamp': %w", err)
		}
		if c.startMilli, err = strconv.ParseInt(strings.TrimSpace(v), 10, 64); err != nil || c.startMilli < 0 {
			return fmt.Errorf("option 'scan.startup.timestamp-millis' must be milliseconds since the epoch, not '%s'", v)
		}
	default:
		return fmt.Errorf("option 'scan.startup.mode' must be '%s', '%s' or '%s', not '%s'", startEarliest, startLatest, startTimestamp, c.startMode)
	}
	switch v := o.String("scan.bounded.mode", "unbounded"); v {
	case "unbounded":
	case startLatest:
		c.bounded = true
	default:
		return fmt.Errorf("option 'scan.bounded.mode' must be 'unbounded' or '%s', not '%s'", startLatest, v)
	}
	if c.bounded && c.mode != modeOffsets {
		return errors.New("option 'scan.bounded.mode' needs 'scan.mode' = 'offsets' (a consumer group's messages have no end)")
	}
	if _, ok := o["scan.startup.mode"]; ok && c.mode != modeOffsets {
		return errors.New("option 'scan.startup.mode' needs 'scan.mode' = 'offsets' (a consumer group receives from where the group is)")
	}
	return nil
}

func (c *config) parseSink(t connector.Table) error {
	o := t.Options
	c.tag = o["tag"]
	if strings.ContainsAny(c.tag, "|*") || strings.TrimSpace(c.tag) != c.tag {
		return fmt.Errorf("option 'tag' of a sink is the one tag of its messages, not a filter: '%s'", c.tag)
	}
	switch v := o.String("sink.delivery-guarantee", "at-least-once"); v {
	case "at-least-once":
	case "exactly-once":
		c.exactlyOnce = true
	default:
		return fmt.Errorf("option 'sink.delivery-guarantee' must be 'at-least-once' or 'exactly-once', not '%s'", v)
	}
	if name, ok := o["sink.keys-column"]; ok {
		c.keysCol = t.Schema.Index(name)
		if c.keysCol < 0 {
			return fmt.Errorf("option 'sink.keys-column': the table has no column '%s' (columns: %s)", name, strings.Join(t.Schema.Names(), ", "))
		}
		if k := t.Schema.Columns[c.keysCol].Type.Kind; !k.IsString() {
			return fmt.Errorf("option 'sink.keys-column': column '%s' is %s, not a string", name, t.Schema.Columns[c.keysCol].Type)
		}
	}
	n, err := o.Int("sink.max-inflight", 64)
	if err != nil {
		return err
	}
	if n < 1 || n > 4096 {
		return fmt.Errorf("option 'sink.max-inflight' must be between 1 and 4096, not %d", n)
	}
	c.maxInflight = int(n)
	if n, err := o.Int("sink.parallelism", 1); err != nil {
		return err
	} else if n != 1 {
		return fmt.Errorf("option 'sink.parallelism' must be 1, not %d: a rocketmq sink sends from one producer ('sink.max-inflight' sets how many messages are in flight)", n)
	}
	return nil
}

// identity says what a table reads or writes: the endpoints, the
// namespace and the topic, and for a source its mode (and the group,
// which decides what a receiving source gets).
func (c *config) identity(sink bool) string {
	s := "rocketmq " + c.endpoints + " topic=" + c.topic
	if c.namespace != "" {
		s += " namespace=" + c.namespace
	}
	if !sink {
		s += " mode=" + c.mode
		if c.mode == modeReceive {
			s += " group=" + c.group
		}
	}
	return s
}

// clientConfig is the v5 client's configuration of the table.
func (c *config) clientConfig(group string) *rmq.Config {
	return &rmq.Config{Endpoint: c.endpoints, NameSpace: c.namespace, ConsumerGroup: group,
		Credentials: &credentials.SessionCredentials{AccessKey: c.accessKey, AccessSecret: c.secretKey}}
}

// clientFunc makes the v5 client with the table's request timeout.
func (c *config) clientFunc() rmq.NewClientFunc {
	return func(cfg *rmq.Config, opts ...rmq.ClientOption) (rmq.Client, error) {
		return rmq.NewClient(cfg, append(opts, rmq.WithQueryRouteTimeout(c.reqTimeout))...)
	}
}

// identityFor is who the table's own calls (offsets mode) come from.
func (c *config) identityFor(clientID string) rmqwire.Identity {
	return rmqwire.Identity{ClientID: clientID, Namespace: c.namespace, AccessKey: c.accessKey, Secret: c.secretKey}
}

// statusError is an answer of the proxy that was not OK.
type statusError struct {
	code int32
	msg  string
}

func (e *statusError) Error() string { return fmt.Sprintf("%s (code %d)", e.msg, e.code) }

// rpcStatus returns the proxy's status code of err, if it is one.
func rpcStatus(err error) (int32, bool) {
	var st *rmq.ErrRpcStatus
	if errors.As(err, &st) {
		return st.Code, true
	}
	var se *statusError
	if errors.As(err, &se) {
		return se.code, true
	}
	return 0, false
}

// permanent reports whether err is an answer that will not change by
// asking again: the request or its credentials are wrong, the topic or
// group does not exist.
func permanent(err error) bool {
	code, ok := rpcStatus(err)
	if !ok {
		return false
	}
	switch code {
	case 40401, 40800, 42900: // MESSAGE_NOT_FOUND, REQUEST_TIMEOUT, TOO_MANY_REQUESTS
		return false
	}
	return code >= 40000 && code < 50000
}
