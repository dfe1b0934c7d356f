package nats

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/types"
)

// options both the source and the sink read.
var commonOptions = []string{
	"connector", "servers", "subject", "format", "username", "password", "token", "creds-file",
	"connect.timeout", connector.ReconnectInitialBackoffOption, connector.ReconnectMaxBackoffOption, "jetstream.stream",
}

var sourceOptions = []string{
	"queue-group", "jetstream.durable", "jetstream.deliver-policy", "jetstream.start-sequence",
	"jetstream.start-time", "jetstream.ack-wait", "jetstream.max-ack-pending", "scan.watermark.idle-timeout",
}

var sinkOptions = []string{"sink.delivery-guarantee", "sink.flush-timeout", "sink.parallelism"}

// Delivery guarantees of a sink ('sink.delivery-guarantee').
const (
	exactlyOnce = "exactly-once"
	atLeastOnce = "at-least-once"
	atMostOnce  = "at-most-once"
)

// Deliver policies of a JetStream source ('jetstream.deliver-policy').
const (
	deliverAll            = "all"
	deliverLast           = "last"
	deliverNew            = "new"
	deliverLastPerSubject = "last-per-subject"
	deliverByStartSeq     = "by-start-sequence"
	deliverByStartTime    = "by-start-time"
)

// config is what a table's options say.
type config struct {
	table    string
	servers  []string // URLs
	server   string   // 'servers' as written, for messages
	subjects []string // 'subject': filters (source) or the subject (sink)

	// tls is the client's TLS configuration (nil: whatever the server
	// asks for, with the system's CAs); its server name is empty unless
	// 'tls.server-name' sets it, and nats.go then takes each server's
	// host.
	tls *tls.Config

	user, password string
	token          string
	creds          string
	clientName     string

	connectTimeout time.Duration
	backoff        connector.Backoff // between attempts to connect again

	fmtName string
	format  format.Factory
	fmtOpts map[string]string

	// source
	queue         string
	stream        string // 'jetstream.stream': JetStream, not core NATS
	durable       string
	deliver       string
	startSeq      uint64
	startTime     time.Time
	ackWait       time.Duration
	maxAckPending int

	// sink
	guarantee string
	flushWait time.Duration
}

// jetStream reports whether the table reads or writes a JetStream stream.
func (c *config) jetStream() bool { return c.stream != "" }

// parseConfig reads t's options for a source (sink false) or a sink.
func parseConfig(t connector.Table, env connector.Env, sink bool) (*config, error) {
	o := t.Options
	c := &config{table: t.Name}
	var err error
	if c.fmtName, err = o.Required("format"); err != nil {
		return nil, err
	}
	known := append(append(append([]string{}, commonOptions...), connector.ErrorPolicyOptions()...), connector.TLSOptions()...)
	if sink {
		known = append(known, sinkOptions...)
	} else {
		known = append(known, sourceOptions...)
	}
	if err := o.CheckKnown("nats", known, c.fmtName+"."); err != nil {
		other := sourceOptions
		if !sink {
			other = sinkOptions
		}
		for k := range o {
			for _, x := range other {
				if k == x {
					return nil, fmt.Errorf("%w (option '%s' is for a %s table)", err, k, map[bool]string{true: "source", false: "sink"}[sink])
				}
			}
		}
		return nil, err
	}
	if env.Formats == nil {
		return nil, errors.New("nats: no format registry")
	}
	if c.format, err = env.Formats.Lookup(c.fmtName); err != nil {
		return nil, err
	}
	if format.IsChangelog(c.format) {
		return nil, fmt.Errorf("nats: format '%s' is a changelog format; a nats table is append-only: use json, csv or raw", c.fmtName)
	}
	c.fmtOpts = o.WithPrefix(c.fmtName + ".")

	if c.server, err = o.Required("servers"); err != nil {
		return nil, fmt.Errorf("%w (e.g. 'nats://127.0.0.1:4222')", err)
	}
	secure := false
	if c.servers, secure, err = parseServers(c.server); err != nil {
		return nil, err
	}
	// nats:// does not mean plain: a NATS server says in its first words
	// whether it requires TLS, and the client upgrades the connection.
	// TLS options therefore go with nats:// as with tls://.
	if c.tls, err = o.ClientTLS("", secure); err != nil {
		return nil, fmt.Errorf("nats: %w", err)
	}
	c.stream = o["jetstream.stream"]
	if _, ok := o["jetstream.stream"]; ok {
		if err := checkName("jetstream.stream", c.stream); err != nil {
			return nil, err
		}
	}
	subject := o["subject"]
	for _, s := range strings.Split(subject, ",") {
		if s = strings.TrimSpace(s); s != "" {
			c.subjects = append(c.subjects, s)
		}
	}
	switch {
	case len(c.subjects) == 0 && (sink || !c.jetStream()):
		return nil, errors.New("option 'subject' is required (a subject such as 'sensors.temp'; a source may use the wildcards '*' and '>')")
	case len(c.subjects) > 1 && sink:
		return nil, fmt.Errorf("option 'subject' of a sink names one subject, not %d", len(c.subjects))
	case len(c.subjects) > 1 && c.jetStream():
		return nil, fmt.Errorf("option 'subject' of a JetStream source names one subject filter, not %d (use a wildcard, or leave it out to read the whole stream)", len(c.subjects))
	}
	for _, s := range c.subjects {
		if err := checkSubject(s, !sink); err != nil {
			return nil, fmt.Errorf("option 'subject': %w", err)
		}
	}

	c.user, c.password, c.token, c.creds = o["username"], o["password"], o["token"], o["creds-file"]
	if _, ok := o["password"]; ok && c.user == "" {
		return nil, errors.New("option 'password' needs 'username'")
	}
	n := 0
	for _, s := range []string{c.user, c.token, c.creds} {
		if s != "" {
			n++
		}
	}
	if n > 1 {
		return nil, errors.New("options 'username', 'token' and 'creds-file' are different ways to authenticate: set one of them")
	}

	if c.connectTimeout, err = o.PositiveDuration("connect.timeout", 30*time.Second); err != nil {
		return nil, err
	}
	if c.backoff, err = o.ReconnectBackoff(); err != nil {
		return nil, err
	}
	role := "source"
	if sink {
		role = "sink"
	}
	c.clientName = "sluice " + role + " " + env.Job + "/" + t.Name
	if sink {
		return c, c.parseSink(t)
	}
	return c, c.parseSource(t)
}

func (c *config) parseSource(t connector.Table) error {
	o := t.Options
	var err error
	c.queue = o["queue-group"]
	if _, ok := o["queue-group"]; ok {
		if c.jetStream() {
			return errors.New("option 'queue-group' is for core NATS subscriptions; a JetStream source shares its work through 'jetstream.durable'")
		}
		if err := checkName("queue-group", c.queue); err != nil {
			return err
		}
	}
	for _, k := range []string{"jetstream.durable", "jetstream.deliver-policy", "jetstream.start-sequence",
		"jetstream.start-time", "jetstream.ack-wait", "jetstream.max-ack-pending"} {
		if _, ok := o[k]; ok && !c.jetStream() {
			return fmt.Errorf("option '%s' needs 'jetstream.stream' (the stream to read)", k)
		}
	}
	if !c.jetStream() {
		return nil
	}
	c.durable = o["jetstream.durable"]
	if _, ok := o["jetstream.durable"]; ok {
		if err := checkName("jetstream.durable", c.durable); err != nil {
			return err
		}
	}
	_, hasSeq := o["jetstream.start-sequence"]
	_, hasTime := o["jetstream.start-time"]
	c.deliver = o["jetstream.deliver-policy"]
	switch {
	case c.deliver != "":
	case hasSeq:
		c.deliver = deliverByStartSeq
	case hasTime:
		c.deliver = deliverByStartTime
	default:
		c.deliver = deliverAll
	}
	switch c.deliver {
	case deliverAll, deliverLast, deliverNew, deliverLastPerSubject:
	case deliverByStartSeq:
		if !hasSeq {
			return errors.New("'jetstream.deliver-policy' = 'by-start-sequence' needs option 'jetstream.start-sequence'")
		}
		v, err := strconv.ParseUint(o["jetstream.start-sequence"], 10, 64)
		if err != nil || v == 0 {
			return fmt.Errorf("option 'jetstream.start-sequence' must be a stream sequence number (1 or more), not '%s'", o["jetstream.start-sequence"])
		}
		c.startSeq = v
	case deliverByStartTime:
		if !hasTime {
			return errors.New("'jetstream.deliver-policy' = 'by-start-time' needs option 'jetstream.start-time'")
		}
		if c.startTime, err = parseTime(o["jetstream.start-time"]); err != nil {
			return fmt.Errorf("option 'jetstream.start-time': %w", err)
		}
	default:
		return fmt.Errorf("option 'jetstream.deliver-policy' must be 'all', 'last', 'new', 'last-per-subject', 'by-start-sequence' or 'by-start-time', not '%s'", c.deliver)
	}
	if hasSeq && c.deliver != deliverByStartSeq || hasTime && c.deliver != deliverByStartTime {
		return fmt.Errorf("options 'jetstream.start-sequence' and 'jetstream.start-time' go with 'jetstream.deliver-policy' 'by-start-sequence' and 'by-start-time', not '%s'", c.deliver)
	}
	if c.ackWait, err = o.Duration("jetstream.ack-wait", 2*time.Minute); err != nil {
		return err
	}
	if c.ackWait < time.Second {
		return fmt.Errorf("option 'jetstream.ack-wait' must be at least 1 s, not %s", c.ackWait)
	}
	m, err := o.Int("jetstream.max-ack-pending", 65536)
	if err != nil {
		return err
	}
	if m < 1 || m > 1<<30 {
		return fmt.Errorf("option 'jetstream.max-ack-pending' must be between 1 and %d, not %d", 1<<30, m)
	}
	c.maxAckPending = int(m)
	for _, k := range []string{"jetstream.ack-wait", "jetstream.max-ack-pending"} {
		if _, ok := o[k]; ok && c.durable == "" {
			return fmt.Errorf("option '%s' is for a durable consumer ('jetstream.durable'); without one the source reads through an ordered consumer, which acknowledges nothing", k)
		}
	}
	return nil
}

func (c *config) parseSink(t connector.Table) error {
	o := t.Options
	var err error
	def := atMostOnce
	if c.jetStream() {
		def = exactlyOnce
	}
	c.guarantee = o.String("sink.delivery-guarantee", def)
	switch c.guarantee {
	case exactlyOnce, atLeastOnce:
		if !c.jetStream() {
			return fmt.Errorf("option 'sink.delivery-guarantee' = '%s' needs a JetStream stream ('jetstream.stream'): core NATS publishes at most once", c.guarantee)
		}
	case atMostOnce, "none":
		if c.jetStream() {
			return fmt.Errorf("option 'sink.delivery-guarantee' of a JetStream sink must be 'exactly-once' or 'at-least-once', not '%s'", c.guarantee)
		}
		c.guarantee = atMostOnce
	default:
		return fmt.Errorf("option 'sink.delivery-guarantee' must be 'exactly-once', 'at-least-once' or 'at-most-once', not '%s'", c.guarantee)
	}
	if c.flushWait, err = o.PositiveDuration("sink.flush-timeout", 30*time.Second); err != nil {
		return err
	}
	if n, err := o.Int("sink.parallelism", 1); err != nil {
		return err
	} else if n != 1 {
		return fmt.Errorf("option 'sink.parallelism' must be 1, not %d: a nats sink publishes in the order written, through one connection", n)
	}
	return nil
}

// parseServers checks a comma-separated list of nats:// or tls:// URLs,
// and says whether one is tls:// (TLS then goes for every server, as in
// nats.go).
func parseServers(s string) ([]string, bool, error) {
	var hosts []string
	secure := false
	for _, v := range strings.Split(s, ",") {
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		u, err := url.Parse(v)
		if err != nil || u.Host == "" {
			return nil, false, fmt.Errorf("option 'servers' must list URLs such as 'nats://127.0.0.1:4222', not '%s'", v)
		}
		switch u.Scheme {
		case "nats":
		case "tls":
			secure = true
		case "ws", "wss":
			return nil, false, fmt.Errorf("option 'servers': scheme '%s' is not supported yet; use nats://host:port (or tls://host:port for TLS)", u.Scheme)
		default:
			return nil, false, fmt.Errorf("option 'servers': unknown scheme '%s' in '%s'; use nats://host:port (or tls://host:port for TLS)", u.Scheme, v)
		}
		if u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.User != nil {
			return nil, false, fmt.Errorf("option 'servers' lists host and port only ('%s://host:4222'), not '%s': credentials go in 'username' and 'password', 'token' or 'creds-file'", u.Scheme, v)
		}
		hosts = append(hosts, u.Host)
	}
	if len(hosts) == 0 {
		return nil, false, errors.New("option 'servers' names no server")
	}
	scheme := "nats://"
	if secure {
		scheme = "tls://"
	}
	out := make([]string, len(hosts))
	for i, h := range hosts {
		out[i] = scheme + h
	}
	return out, secure, nil
}

// checkSubject checks a subject: dot-separated tokens, none empty, no
// white space; with wildcards, '*' a whole token and '>' the last one.
func checkSubject(s string, wildcards bool) error {
	if s == "" {
		return errors.New("empty subject")
	}
	if strings.ContainsAny(s, " \t\r\n") {
		return fmt.Errorf("subject '%s' has white space", s)
	}
	toks := strings.Split(s, ".")
	for i, tok := range toks {
		if tok == "" {
			return fmt.Errorf("subject '%s' has an empty token", s)
		}
		if !strings.ContainsAny(tok, "*>") {
			continue
		}
		if !wildcards {
			return fmt.Errorf("subject '%s' has a wildcard ('*' or '>'): a message is published to one subject", s)
		}
		if tok == "*" || tok == ">" && i == len(toks)-1 {
			continue
		}
		return fmt.Errorf("subject '%s': '*' must be a whole token, and '>' a whole token and the last one", s)
	}
	return nil
}

// checkName checks a stream, consumer or queue group name.
func checkName(opt, s string) error {
	if s == "" || strings.ContainsAny(s, " \t\r\n.*>/\\") {
		return fmt.Errorf("option '%s' must be a name without white space, '.', '*', '>', '/' or '\\', not '%s'", opt, s)
	}
	return nil
}

// parseTime reads an RFC 3339 time, a 'yyyy-MM-dd HH:mm:ss' time in UTC
// or milliseconds since the epoch.
func parseTime(s string) (time.Time, error) {
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.UnixMilli(ms).UTC(), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("'%s' is not a time (use RFC 3339, e.g. '2026-01-02T15:04:05Z', or milliseconds since the epoch)", s)
}

// identity says what a table reads or writes: the servers, the subjects,
// the stream and, for core NATS, the queue group (which decides which
// messages a source gets). Not the consumer or the credentials.
func (c *config) identity() string {
	s := "nats " + strings.Join(c.servers, ",")
	if c.jetStream() {
		s += " stream=" + c.stream
	}
	s += " subject=" + strings.Join(c.subjects, ",")
	if c.queue != "" {
		s += " queue=" + c.queue
	}
	return s
}

// metadataTypes are the METADATA keys of the connector with their types.
var metadataTypes = map[string]string{
	"subject":       "STRING NOT NULL",
	"headers":       "MAP<STRING, STRING> NOT NULL",
	"reply":         "STRING NULL",
	"stream":        "STRING NULL",
	"sequence":      "BIGINT NULL",
	"timestamp":     "TIMESTAMP_LTZ(3) NULL",
	"num-delivered": "BIGINT NULL",
}

// checkMetadata checks the declared types of t's METADATA columns.
func checkMetadata(t connector.Table) error {
	for _, m := range t.Metadata {
		want, ok := metadataTypes[m.Key]
		if !ok {
			return fmt.Errorf("column '%s': unknown METADATA key '%s'", m.Name, m.Key)
		}
		k := m.Type.Kind
		fits := false
		switch m.Key {
		case "subject", "reply", "stream":
			fits = k.IsString()
		case "sequence", "num-delivered":
			fits = k == types.KindBigInt
		case "timestamp":
			fits = k.IsTimestamp()
		case "headers":
			fits = k == types.KindMap && m.Type.Elem != nil && m.Type.Value != nil &&
				m.Type.Elem.Kind.IsString() && m.Type.Value.Kind.IsString()
		}
		if !fits {
			return fmt.Errorf("column '%s': METADATA '%s' is %s and cannot be read as %s", m.Name, m.Key, want, m.Type)
		}
	}
	return nil
}

// subjectMatches reports whether subject (no wildcards) matches filter.
func subjectMatches(filter, subject string) bool {
	ft, st := strings.Split(filter, "."), strings.Split(subject, ".")
	for i, f := range ft {
		if f == ">" {
			return len(st) > i
		}
		if i >= len(st) || f != "*" && f != st[i] {
			return false
		}
	}
	return len(ft) == len(st)
}
