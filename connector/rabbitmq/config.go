package rabbitmq

import (
	"crypto/tls"
	"errors"
	"fmt"
	"maps"
	"math"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/internal/suggest"
	"github.com/sluicesql/sluice/types"
)

// options both the source and the sink read.
var commonOptions = []string{
	"connector", "uri", "username", "password", "format", "queue", "exchange", "routing-key",
	"queue.declare", "queue.durable", "queue.exclusive", "queue.auto-delete", "queue.arguments",
	"exchange.declare", "exchange.type", "exchange.durable",
	"heartbeat", "connect.timeout", connector.ReconnectInitialBackoffOption, connector.ReconnectMaxBackoffOption,
}

var sourceOptions = []string{"prefetch-count", "scan.consumer-tag", "scan.exclusive"}

var sinkOptions = []string{
	"sink.routing-key-column", "sink.delivery-mode", "sink.delivery-guarantee", "sink.content-type",
	"sink.mandatory", "sink.flush-timeout", "sink.max-in-flight", "sink.parallelism",
}

// config is what a table's options say.
type config struct {
	table string
	uri   amqp.URI // with the credentials of 'username' and 'password'
	// where is the URI without its password, for messages.
	where string
	tls   *tls.Config // nil: plain AMQP

	queue        string
	declareQueue bool
	durable      bool
	exclusive    bool
	autoDelete   bool
	queueArgs    amqp.Table
	exchange     string
	routingKeys  []string // source: the bindings' keys; sink: one key
	declareEx    bool
	exchangeType string
	exchangeDur  bool
	heartbeat    time.Duration
	connTimeout  time.Duration
	// dialTimeout bounds each attempt to connect (TCP, TLS and the AMQP
	// handshake): the URI's connection_timeout, else connTimeout within
	// 1 s and 10 s.
	dialTimeout   time.Duration
	channelMax    uint16            // the URI's channel_max; 0: the broker's
	frameMax      int               // the URI's frame_max; default 131072, 0: the broker's
	auth          []string          // SASL mechanisms in order of preference: the URI's auth_mechanism, or PLAIN
	backoff       connector.Backoff // between attempts to connect again
	connName      string
	fmtName       string
	format        format.Factory
	fmtOpts       map[string]string
	prefetch      int
	consumerTag   string
	exclusiveCons bool

	// sink
	keyCol      int // 'sink.routing-key-column', -1 without
	persistent  bool
	confirms    bool
	contentType string
	mandatory   bool
	flushWait   time.Duration
	maxInFlight int
}

// parseConfig reads t's options for a source (sink false) or a sink.
func parseConfig(t connector.Table, env connector.Env, sink bool) (*config, error) {
	o := t.Options
	c := &config{table: t.Name, keyCol: -1}
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
	if err := o.CheckKnown("rabbitmq", known, c.fmtName+"."); err != nil {
		if !sink && o.HasPrefix("sink.") {
			return nil, fmt.Errorf("%w (a source table takes no 'sink.' options)", err)
		}
		if sink && (o.HasPrefix("scan.") || o["prefetch-count"] != "") {
			return nil, fmt.Errorf("%w (a sink table takes no source options)", err)
		}
		return nil, err
	}
	if env.Formats == nil {
		return nil, errors.New("rabbitmq: no format registry")
	}
	if c.format, err = env.Formats.Lookup(c.fmtName); err != nil {
		return nil, err
	}
	if format.IsChangelog(c.format) {
		return nil, fmt.Errorf("rabbitmq: format '%s' is a changelog format; a rabbitmq table is append-only: use json, csv or raw", c.fmtName)
	}
	c.fmtOpts = o.WithPrefix(c.fmtName + ".")

	raw, err := o.Required("uri")
	if err != nil {
		return nil, fmt.Errorf("%w (e.g. 'amqp://guest:guest@127.0.0.1:5672/')", err)
	}
	var params uriParams
	if c.uri, params, err = parseURI(raw); err != nil {
		return nil, err
	}
	secure := c.uri.Scheme == "amqps"
	if !secure {
		if err := o.RejectTLS(fmt.Sprintf("option 'uri' = '%s' is plain AMQP (amqps:// is AMQP over TLS, port 5671 by default)", redactRaw(raw))); err != nil {
			return nil, err
		}
	}
	if c.tls, err = o.ClientTLS(c.uri.Host, secure); err != nil {
		return nil, fmt.Errorf("rabbitmq: %w", err)
	}
	if u, ok := o["username"]; ok {
		c.uri.Username = u
	}
	if p, ok := o["password"]; ok {
		c.uri.Password = p
	}
	c.where = redactedURI(c.uri)

	c.queue = o["queue"]
	if !sink && c.queue == "" {
		return nil, errors.New("option 'queue' is required: the queue the table reads")
	}
	c.exchange = o["exchange"]
	for _, k := range strings.Split(o["routing-key"], ";") {
		c.routingKeys = append(c.routingKeys, strings.TrimSpace(k))
	}
	if sink && len(c.routingKeys) > 1 {
		return nil, fmt.Errorf("option 'routing-key' of a sink is one routing key, not %d", len(c.routingKeys))
	}
	if _, ok := o["routing-key"]; !ok && sink && c.exchange == "" {
		// The default exchange routes by queue name.
		c.routingKeys = []string{c.queue}
	}
	if sink && c.exchange == "" && c.routingKeys[0] == "" && o["sink.routing-key-column"] == "" {
		return nil, errors.New("a rabbitmq sink needs 'queue', or 'exchange' and 'routing-key', or 'sink.routing-key-column': where its messages go")
	}
	if !sink && c.exchange == "" && o["routing-key"] != "" {
		return nil, errors.New("option 'routing-key' of a source binds the queue to 'exchange', which is not set")
	}
	if c.declareQueue, err = o.Bool("queue.declare", false); err != nil {
		return nil, err
	}
	if c.durable, err = o.Bool("queue.durable", true); err != nil {
		return nil, err
	}
	if c.exclusive, err = o.Bool("queue.exclusive", false); err != nil {
		return nil, err
	}
	if c.autoDelete, err = o.Bool("queue.auto-delete", false); err != nil {
		return nil, err
	}
	if c.queueArgs, err = parseArguments(o["queue.arguments"]); err != nil {
		return nil, err
	}
	if c.declareQueue && c.queue == "" {
		return nil, errors.New("option 'queue.declare' needs 'queue'")
	}
	if c.declareEx, err = o.Bool("exchange.declare", false); err != nil {
		return nil, err
	}
	c.exchangeType = o.String("exchange.type", "direct")
	switch c.exchangeType {
	case "direct", "fanout", "topic", "headers":
	default:
		return nil, fmt.Errorf("option 'exchange.type' must be 'direct', 'fanout', 'topic' or 'headers', not '%s'", c.exchangeType)
	}
	if c.exchangeDur, err = o.Bool("exchange.durable", true); err != nil {
		return nil, err
	}
	if c.declareEx && (c.exchange == "" || strings.HasPrefix(c.exchange, "amq.")) {
		return nil, fmt.Errorf("option 'exchange.declare' needs an 'exchange' of your own, not '%s'", c.exchange)
	}

	if c.heartbeat, err = o.Duration("heartbeat", 10*time.Second); err != nil {
		return nil, err
	}
	if c.heartbeat != 0 && (c.heartbeat < time.Second || c.heartbeat > 65535*time.Second) {
		return nil, fmt.Errorf("option 'heartbeat' must be 0 or between 1 s and 65535 s, not %s", c.heartbeat)
	}
	if params.heartbeat != nil {
		if _, set := o["heartbeat"]; set && c.heartbeat != *params.heartbeat {
			return nil, fmt.Errorf("option 'uri' asks for heartbeat=%d (seconds) and option 'heartbeat' for %s: set one of them", *params.heartbeat/time.Second, o["heartbeat"])
		}
		c.heartbeat = *params.heartbeat
	}
	if c.connTimeout, err = o.PositiveDuration("connect.timeout", 30*time.Second); err != nil {
		return nil, err
	}
	c.dialTimeout = min(max(c.connTimeout, time.Second), 10*time.Second)
	if params.connTimeout > 0 {
		c.dialTimeout = params.connTimeout
	}
	c.channelMax, c.frameMax, c.auth = params.channelMax, params.frameMax, params.auth
	if slices.Contains(c.auth, "EXTERNAL") && (c.tls == nil || c.tls.GetClientCertificate == nil && len(c.tls.Certificates) == 0) {
		return nil, fmt.Errorf("option 'uri': auth_mechanism=external authenticates with a client certificate: use amqps:// with the options '%s' and '%s'",
			connector.TLSCertFileOption, connector.TLSKeyFileOption)
	}
	if c.backoff, err = o.ReconnectBackoff(); err != nil {
		return nil, err
	}
	role := "source"
	if sink {
		role = "sink"
	}
	c.connName = "sluice " + role + " " + env.Job + "/" + t.Name
	if sink {
		return c, c.parseSink(t)
	}
	return c, c.parseSource(t, env)
}

func (c *config) parseSource(t connector.Table, env connector.Env) error {
	o := t.Options
	n, err := o.Int("prefetch-count", 10000)
	if err != nil {
		return err
	}
	if n < 1 || n > 65535 {
		return fmt.Errorf("option 'prefetch-count' must be between 1 and 65535, not %d", n)
	}
	c.prefetch = int(n)
	c.consumerTag = o["scan.consumer-tag"]
	if c.consumerTag == "" {
		c.consumerTag = "sluice-" + env.Job + "-" + t.Name
		if env.Job == "" {
			c.consumerTag = "sluice-" + t.Name
		}
	}
	if len(c.consumerTag) > 255 {
		c.consumerTag = c.consumerTag[:255]
	}
	if c.exclusiveCons, err = o.Bool("scan.exclusive", false); err != nil {
		return err
	}
	return nil
}

func (c *config) parseSink(t connector.Table) error {
	o := t.Options
	var err error
	if name, ok := o["sink.routing-key-column"]; ok {
		c.keyCol = t.Schema.Index(name)
		if c.keyCol < 0 {
			return fmt.Errorf("option 'sink.routing-key-column': the table has no column '%s' (columns: %s)", name, strings.Join(t.Schema.Names(), ", "))
		}
		if k := t.Schema.Columns[c.keyCol].Type.Kind; !k.IsString() {
			return fmt.Errorf("option 'sink.routing-key-column': column '%s' is %s, not a string", name, t.Schema.Columns[c.keyCol].Type)
		}
	}
	switch v := o.String("sink.delivery-mode", "persistent"); v {
	case "persistent":
		c.persistent = true
	case "transient", "non-persistent":
	default:
		return fmt.Errorf("option 'sink.delivery-mode' must be 'persistent' or 'transient', not '%s'", v)
	}
	switch v := o.String("sink.delivery-guarantee", "at-least-once"); v {
	case "at-least-once":
		c.confirms = true
	case "none":
	case "exactly-once":
		return errors.New("option 'sink.delivery-guarantee': a rabbitmq sink cannot be 'exactly-once' (AMQP 0-9-1 has no de-duplication of published messages); use 'at-least-once' (publisher confirms) or 'none'")
	default:
		return fmt.Errorf("option 'sink.delivery-guarantee' must be 'at-least-once' or 'none', not '%s'", v)
	}
	c.contentType = o.String("sink.content-type", defaultContentType(c.fmtName))
	if c.mandatory, err = o.Bool("sink.mandatory", true); err != nil {
		return err
	}
	if c.flushWait, err = o.PositiveDuration("sink.flush-timeout", 30*time.Second); err != nil {
		return err
	}
	n, err := o.Int("sink.max-in-flight", 10000)
	if err != nil {
		return err
	}
	if n < 1 || n > 1<<20 {
		return fmt.Errorf("option 'sink.max-in-flight' must be between 1 and 1048576, not %d", n)
	}
	c.maxInFlight = int(n)
	if n, err := o.Int("sink.parallelism", 1); err != nil {
		return err
	} else if n != 1 {
		return fmt.Errorf("option 'sink.parallelism' must be 1, not %d: a rabbitmq sink publishes in order on one channel", n)
	}
	return nil
}

// defaultContentType is the content type of a format's messages.
func defaultContentType(format string) string {
	switch format {
	case "json":
		return "application/json"
	case "csv":
		return "text/csv"
	case "raw":
		return "application/octet-stream"
	}
	return ""
}

// uriParams are what the query parameters of an AMQP URI ask for.
type uriParams struct {
	heartbeat   *time.Duration // heartbeat; nil: not given
	connTimeout time.Duration  // connection_timeout; 0: not given
	channelMax  uint16         // channel_max; 0: the broker's
	frameMax    int            // frame_max; 0: the broker's
	auth        []string       // auth_mechanism, upper case, in order
}

// uriParamNames are the query parameters RabbitMQ's URIs take
// (https://www.rabbitmq.com/docs/uri-query-parameters, as its Erlang
// client reads them; frame_max and fail_if_no_peer_cert from earlier
// versions of that page), for suggestions.
var uriParamNames = []string{
	"heartbeat", "connection_timeout", "channel_max", "frame_max", "auth_mechanism",
	"cacertfile", "certfile", "keyfile", "server_name_indication", "verify", "fail_if_no_peer_cert",
}

// uriTLSParams are the TLS parameters, refused with the option that says
// the same.
var uriTLSParams = map[string]string{
	"cacertfile":             "option '" + connector.TLSCAFileOption + "'",
	"certfile":               "option '" + connector.TLSCertFileOption + "'",
	"keyfile":                "option '" + connector.TLSKeyFileOption + "'",
	"server_name_indication": "option '" + connector.TLSServerNameOption + "'",
	"verify":                 "option '" + connector.TLSInsecureSkipVerifyOption + "' (the server's certificate is verified unless it is 'true')",
	"fail_if_no_peer_cert":   "options '" + connector.TLSCertFileOption + "' and '" + connector.TLSKeyFileOption + "' (it is a server's setting: whether a client must send a certificate)",
}

// supportedParams says what a URI's query may hold, for messages.
const supportedParams = "heartbeat, connection_timeout, channel_max, frame_max and auth_mechanism; TLS through the tls.* options"

// parseURI checks an AMQP URI and reads its query parameters as
// RabbitMQ's documentation defines them (heartbeat in seconds,
// connection_timeout in milliseconds, channel_max, frame_max in bytes,
// auth_mechanism any number of times); any other parameter is refused,
// not ignored.
func parseURI(s string) (amqp.URI, uriParams, error) {
	var p uriParams
	bad := func(err error) (amqp.URI, uriParams, error) {
		return amqp.URI{}, p, fmt.Errorf("option 'uri' must be an AMQP URI such as 'amqp://guest:guest@127.0.0.1:5672/' (the path is the virtual host), not '%s': %v",
			redactRaw(s), err)
	}
	pu, err := url.Parse(s)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // not the URI again: it holds the password
		}
		return bad(err)
	}
	if pu.Fragment != "" || strings.HasSuffix(s, "#") {
		return amqp.URI{}, p, fmt.Errorf("option 'uri' = '%s' has a fragment (after '#'), which an AMQP URI has none of; a '#' in a user name or password is written %%23", redactRaw(s))
	}
	query, err := url.ParseQuery(pu.RawQuery)
	if err != nil {
		return amqp.URI{}, p, fmt.Errorf("option 'uri': cannot read its query (after '?'): %v", err)
	}
	// amqp091-go reads some of the parameters, with messages of its own,
	// and ignores the others: it is given the URI without its query.
	base, _, _ := strings.Cut(s, "?")
	u, err := amqp.ParseURI(base)
	if err != nil {
		return bad(err)
	}
	names := slices.Sorted(maps.Keys(query))
	for _, name := range names {
		vs := query[name]
		if opt, ok := uriTLSParams[name]; ok {
			return amqp.URI{}, p, fmt.Errorf("option 'uri': the query parameter '%s' is not read; use the %s", name, opt)
		}
		if !slices.Contains(uriParamNames, name) {
			return amqp.URI{}, p, fmt.Errorf("option 'uri': unknown query parameter '%s'%s; an AMQP URI takes %s",
				name, suggest.Hint(name, uriParamNames), supportedParams)
		}
		if name == "auth_mechanism" {
			for _, v := range vs {
				m := strings.ToUpper(v)
				switch m {
				case "PLAIN", "AMQPLAIN", "EXTERNAL":
				default:
					return amqp.URI{}, p, fmt.Errorf("option 'uri': auth_mechanism=%s is not a SASL mechanism the connector speaks: plain, amqplain or external", v)
				}
				if !slices.Contains(p.auth, m) {
					p.auth = append(p.auth, m)
				}
			}
			continue
		}
		if len(vs) > 1 {
			return amqp.URI{}, p, fmt.Errorf("option 'uri': the query parameter '%s' is given %d times", name, len(vs))
		}
		v := vs[0]
		// A whole number, digits only (no sign, space or unit).
		whole := func(what string, max uint64) (uint64, error) {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil || n > max {
				return 0, fmt.Errorf("option 'uri': the query parameter %s=%s must be %s from 0 to %d", name, v, what, max)
			}
			return n, nil
		}
		switch name {
		case "heartbeat":
			n, err := whole("a whole number of seconds", 65535)
			if err != nil {
				return amqp.URI{}, p, err
			}
			d := time.Duration(n) * time.Second
			p.heartbeat = &d
		case "connection_timeout":
			n, err := whole("a whole number of milliseconds", math.MaxInt32)
			if err != nil {
				return amqp.URI{}, p, err
			}
			if n == 0 {
				return amqp.URI{}, p, errors.New("option 'uri': the query parameter connection_timeout=0 would give up before connecting: give milliseconds above 0")
			}
			p.connTimeout = time.Duration(n) * time.Millisecond
		case "channel_max":
			n, err := whole("a number of channels", 65535)
			if err != nil {
				return amqp.URI{}, p, err
			}
			p.channelMax = uint16(n)
		case "frame_max":
			n, err := whole("a number of bytes", math.MaxInt32)
			if err != nil {
				return amqp.URI{}, p, err
			}
			if n > 0 && n < 4096 {
				return amqp.URI{}, p, fmt.Errorf("option 'uri': the query parameter frame_max=%s is below 4096 bytes, the least AMQP 0-9-1 allows (0: the broker's)", v)
			}
			p.frameMax = int(n)
		}
	}
	if !query.Has("frame_max") {
		p.frameMax = 131072 // RabbitMQ's default
	}
	return u, p, nil
}

// redactedURI is u without its password.
func redactedURI(u amqp.URI) string {
	s := u.Scheme + "://"
	if u.Username != "" {
		s += url.User(u.Username).String() + "@"
	}
	s += net.JoinHostPort(u.Host, strconv.Itoa(u.Port)) + "/"
	if u.Vhost != "/" {
		s += url.PathEscape(u.Vhost)
	}
	return s
}

// redactRaw masks the password of a URI that does not parse.
func redactRaw(s string) string {
	if u, err := url.Parse(s); err == nil {
		return u.Redacted()
	}
	if at := strings.LastIndex(s, "@"); at >= 0 {
		if i := strings.Index(s, "://"); i >= 0 && i < at {
			if c := strings.Index(s[i+3:at], ":"); c >= 0 {
				return s[:i+3+c+1] + "xxxxx" + s[at:]
			}
		}
	}
	return s
}

// parseArguments reads 'queue.arguments': k=v pairs separated by ';', a
// value an integer, true or false, or else a string.
func parseArguments(s string) (amqp.Table, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	t := amqp.Table{}
	for _, kv := range strings.Split(s, ";") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			return nil, fmt.Errorf("option 'queue.arguments' is k=v pairs separated by ';' (e.g. 'x-queue-type=quorum;x-max-length=10000'), not '%s'", s)
		}
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			t[k] = n
		} else if b, err := strconv.ParseBool(v); err == nil && (v == "true" || v == "false") {
			t[k] = b
		} else {
			t[k] = v
		}
	}
	return t, nil
}

// identity says what a table reads or writes: the broker, its virtual
// host and the queue (or exchange and routing key), not the credentials.
func (c *config) identity(sink bool) string {
	s := fmt.Sprintf("rabbitmq amqp://%s:%d/%s", c.uri.Host, c.uri.Port, strings.TrimPrefix(c.uri.Vhost, "/"))
	if !sink {
		return s + " queue=" + c.queue
	}
	return s + " exchange=" + c.exchange + " routing-key=" + c.routingKeys[0]
}

// metadataTypes are the METADATA keys of the connector with their types.
var metadataTypes = map[string]string{
	"exchange":       "STRING NOT NULL",
	"routing-key":    "STRING NOT NULL",
	"headers":        "MAP<STRING, STRING> NOT NULL",
	"timestamp":      "TIMESTAMP_LTZ(3) NULL",
	"message-id":     "STRING NULL",
	"correlation-id": "STRING NULL",
	"content-type":   "STRING NULL",
	"app-id":         "STRING NULL",
	"type":           "STRING NULL",
	"reply-to":       "STRING NULL",
	"priority":       "INT NULL",
	"delivery-tag":   "BIGINT NOT NULL",
	"redelivered":    "BOOLEAN NOT NULL",
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
		case "exchange", "routing-key", "message-id", "correlation-id", "content-type", "app-id", "type", "reply-to":
			fits = k.IsString()
		case "priority":
			fits = k == types.KindInt || k == types.KindBigInt || k == types.KindSmallInt || k == types.KindTinyInt
		case "delivery-tag":
			fits = k == types.KindBigInt
		case "redelivered":
			fits = k == types.KindBoolean
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
