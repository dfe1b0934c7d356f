package mqtt

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/types"
)

// options both the source and the sink read.
var commonOptions = []string{
	"connector", "server", "topic", "format", "protocol-version", "client-id", "username", "password",
	"qos", "keep-alive", "connect.timeout", connector.ReconnectInitialBackoffOption, connector.ReconnectMaxBackoffOption,
}

var sourceOptions = []string{
	"scan.retained", "scan.shared-group", "scan.session.persistent", "scan.session.expiry-interval",
	"scan.receive-maximum", "scan.watermark.idle-timeout",
}

var sinkOptions = []string{
	"sink.retained", "sink.topic-column", "sink.buffer.dir", "sink.buffer.max-size", "sink.buffer.overflow",
	"sink.flush-timeout", "sink.parallelism",
}

// config is what a table's options say.
type config struct {
	table    string
	server   string // as written, for messages
	dial     dialOptions
	topics   []string // 'topic': filters (source) or the topic (sink)
	group    string   // 'scan.shared-group'
	qos      byte
	retained bool // scan.retained / sink.retained

	connectTimeout time.Duration
	backoff        connector.Backoff // between attempts to connect again

	fmtName string
	format  format.Factory
	fmtOpts map[string]string

	// sink
	topicCol    int // 'sink.topic-column' index, -1 without
	bufDir      string
	bufMax      int64
	dropOldest  bool
	flushWait   time.Duration
	persistBuf  bool // the buffer is on disk
	jobAndTable string
}

// parseConfig reads t's options for a source (sink false) or a sink.
func parseConfig(t connector.Table, env connector.Env, sink bool) (*config, error) {
	o := t.Options
	c := &config{table: t.Name, topicCol: -1}
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
	if err := o.CheckKnown("mqtt", known, c.fmtName+"."); err != nil {
		if !sink && o.HasPrefix("sink.") || sink && o.HasPrefix("scan.") {
			return nil, fmt.Errorf("%w (a %s table takes the %s options)", err, map[bool]string{true: "sink", false: "source"}[sink],
				map[bool]string{true: "'sink.'", false: "'scan.'"}[sink])
		}
		return nil, err
	}
	if env.Formats == nil {
		return nil, errors.New("mqtt: no format registry")
	}
	if c.format, err = env.Formats.Lookup(c.fmtName); err != nil {
		return nil, err
	}
	if format.IsChangelog(c.format) {
		return nil, fmt.Errorf("mqtt: format '%s' is a changelog format; an mqtt table is append-only: use json, csv or raw", c.fmtName)
	}
	c.fmtOpts = o.WithPrefix(c.fmtName + ".")

	if c.server, err = o.Required("server"); err != nil {
		return nil, fmt.Errorf("%w (e.g. 'tcp://127.0.0.1:1883')", err)
	}
	host, secure, err := parseServer(c.server)
	if err != nil {
		return nil, err
	}
	c.dial.addr = host
	if !secure {
		if err := o.RejectTLS(fmt.Sprintf("option 'server' = '%s' is plain MQTT (mqtts:// is MQTT over TLS)", c.server)); err != nil {
			return nil, err
		}
	}
	hostname, _, _ := net.SplitHostPort(host)
	if c.dial.tls, err = o.ClientTLS(hostname, secure); err != nil {
		return nil, fmt.Errorf("mqtt: %w", err)
	}
	topic, err := o.Required("topic")
	if err != nil {
		return nil, err
	}
	for _, s := range strings.Split(topic, ";") {
		if s = strings.TrimSpace(s); s != "" {
			c.topics = append(c.topics, s)
		}
	}
	if len(c.topics) == 0 {
		return nil, errors.New("option 'topic' names no topic")
	}
	if sink {
		if len(c.topics) > 1 {
			return nil, fmt.Errorf("option 'topic' of a sink names one topic, not %d", len(c.topics))
		}
		if err := checkTopicName(c.topics[0]); err != nil {
			return nil, fmt.Errorf("option 'topic': %w", err)
		}
	} else {
		for _, f := range c.topics {
			if err := checkFilter(f); err != nil {
				return nil, fmt.Errorf("option 'topic': %w", err)
			}
		}
	}

	switch v := o.String("protocol-version", "5"); v {
	case "5", "5.0":
		c.dial.version = 5
	case "3.1.1", "4":
		c.dial.version = 4
	default:
		return nil, fmt.Errorf("option 'protocol-version' must be '3.1.1' or '5', not '%s'", v)
	}
	q, err := o.Int("qos", 1)
	if err != nil {
		return nil, err
	}
	if q < 0 || q > 2 {
		return nil, fmt.Errorf("option 'qos' must be 0, 1 or 2, not %d", q)
	}
	c.qos = byte(q)
	c.dial.username, c.dial.hasUser = o["username"]
	c.dial.password, c.dial.hasPass = o["password"]
	if c.dial.hasPass && !c.dial.hasUser && c.dial.version < 5 {
		return nil, errors.New("option 'password' needs 'username' in MQTT 3.1.1")
	}
	if c.dial.keep, err = o.Duration("keep-alive", 30*time.Second); err != nil {
		return nil, err
	}
	if c.dial.keep != 0 && (c.dial.keep < time.Second || c.dial.keep > 65535*time.Second) {
		return nil, fmt.Errorf("option 'keep-alive' must be 0 or between 1 s and 65535 s, not %s", c.dial.keep)
	}
	if c.connectTimeout, err = o.PositiveDuration("connect.timeout", 30*time.Second); err != nil {
		return nil, err
	}
	c.dial.timeout = min(max(c.connectTimeout, time.Second), 10*time.Second)
	if c.backoff, err = o.ReconnectBackoff(); err != nil {
		return nil, err
	}
	c.jobAndTable = env.Job + "/" + t.Name
	c.dial.clientID = o["client-id"]
	if c.dial.clientID == "" {
		// Stable across runs of the job (a persistent session is found
		// again), distinct between jobs, tables and the source and sink.
		role := "src"
		if sink {
			role = "snk"
		}
		h := sha256.Sum256([]byte(role + "\x00" + env.Job + "\x00" + t.Name + "\x00" + c.server + "\x00" + topic))
		c.dial.clientID = "sluice-" + role + "-" + hex.EncodeToString(h[:8])
	}
	if len(c.dial.clientID) > 65535 {
		return nil, errors.New("option 'client-id' is too long")
	}
	if sink {
		return c, c.parseSink(t, env)
	}
	return c, c.parseSource(t)
}

func (c *config) parseSource(t connector.Table) error {
	o := t.Options
	var err error
	if c.retained, err = o.Bool("scan.retained", false); err != nil {
		return err
	}
	c.group = o["scan.shared-group"]
	if _, ok := o["scan.shared-group"]; ok {
		if c.group == "" || strings.ContainsAny(c.group, "/+#") {
			return fmt.Errorf("option 'scan.shared-group' must be a name without '/', '+' or '#', not '%s'", c.group)
		}
		for _, f := range c.topics {
			if strings.HasPrefix(f, "$share/") {
				return fmt.Errorf("option 'scan.shared-group' and a '$share/' topic filter ('%s') cannot go together", f)
			}
		}
	}
	persistent, err := o.Bool("scan.session.persistent", true)
	if err != nil {
		return err
	}
	c.dial.clean = !persistent
	expiry, err := o.Duration("scan.session.expiry-interval", 24*time.Hour)
	if err != nil {
		return err
	}
	if expiry < 0 || expiry/time.Second > math.MaxUint32 {
		return fmt.Errorf("option 'scan.session.expiry-interval' is out of range: %s", expiry)
	}
	if persistent {
		c.dial.expiry = uint32(expiry / time.Second)
		if c.dial.version == 5 && c.dial.expiry == 0 {
			return errors.New("option 'scan.session.expiry-interval' must be at least 1 s for a persistent session (or set 'scan.session.persistent' = 'false')")
		}
	}
	rm, err := o.Int("scan.receive-maximum", 65535)
	if err != nil {
		return err
	}
	if rm < 1 || rm > 65535 {
		return fmt.Errorf("option 'scan.receive-maximum' must be between 1 and 65535, not %d", rm)
	}
	c.dial.receiveMax = uint16(rm)
	return nil
}

func (c *config) parseSink(t connector.Table, env connector.Env) error {
	o := t.Options
	var err error
	c.dial.clean = true
	if c.retained, err = o.Bool("sink.retained", false); err != nil {
		return err
	}
	if name, ok := o["sink.topic-column"]; ok {
		c.topicCol = t.Schema.Index(name)
		if c.topicCol < 0 {
			return fmt.Errorf("option 'sink.topic-column': the table has no column '%s' (columns: %s)", name, strings.Join(t.Schema.Names(), ", "))
		}
		if k := t.Schema.Columns[c.topicCol].Type.Kind; !k.IsString() {
			return fmt.Errorf("option 'sink.topic-column': column '%s' is %s, not a string", name, t.Schema.Columns[c.topicCol].Type)
		}
	}
	if c.bufMax, err = o.MemorySize("sink.buffer.max-size", 64<<20); err != nil {
		return err
	}
	if c.bufMax < 1<<10 {
		return fmt.Errorf("option 'sink.buffer.max-size' must be at least 1 kb, not %d bytes", c.bufMax)
	}
	switch v := o.String("sink.buffer.overflow", "fail"); v {
	case "fail":
	case "drop-oldest":
		c.dropOldest = true
	default:
		return fmt.Errorf("option 'sink.buffer.overflow' must be 'fail' or 'drop-oldest', not '%s'", v)
	}
	if c.flushWait, err = o.PositiveDuration("sink.flush-timeout", 30*time.Second); err != nil {
		return err
	}
	if n, err := o.Int("sink.parallelism", 1); err != nil {
		return err
	} else if n != 1 {
		return fmt.Errorf("option 'sink.parallelism' must be 1, not %d: an mqtt sink keeps the order of its messages in one connection", n)
	}
	c.bufDir = o["sink.buffer.dir"]
	if c.bufDir == "" && env.StateDir != "" {
		c.bufDir = filepath.Join(env.StateDir, "mqtt-buffer", safeName(env.Job), safeName(t.Name))
	}
	c.persistBuf = c.bufDir != ""
	return nil
}

// safeName makes s a file name.
func safeName(s string) string {
	if s == "" {
		return "_"
	}
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == 0 || r == ':' {
			return '_'
		}
		return r
	}, s)
}

// parseServer returns the host:port of a 'server' URL, and whether its
// scheme asks for TLS (ssl://, tls:// and mqtts://, as Paho and Mosquitto
// write it; port 8883 by default).
func parseServer(s string) (string, bool, error) {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return "", false, fmt.Errorf("option 'server' must be a URL such as 'tcp://127.0.0.1:1883', not '%s'", s)
	}
	port, secure := "1883", false
	switch u.Scheme {
	case "tcp", "mqtt":
	case "ssl", "tls", "mqtts":
		port, secure = "8883", true
	case "ws", "wss":
		return "", false, fmt.Errorf("option 'server': scheme '%s' is not supported yet; use tcp:// (MQTT over TCP) or mqtts:// (over TLS)", u.Scheme)
	default:
		return "", false, fmt.Errorf("option 'server': unknown scheme '%s' in '%s'; use tcp://host:port or mqtts://host:port", u.Scheme, s)
	}
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.User != nil {
		return "", false, fmt.Errorf("option 'server' is host and port only ('%s://host:%s'), not '%s': credentials go in 'username' and 'password'", u.Scheme, port, s)
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), port)
	}
	return host, secure, nil
}

// checkFilter checks a topic filter: '+' and '#' only as whole levels,
// '#' last.
func checkFilter(f string) error {
	if f == "" {
		return errors.New("empty topic filter")
	}
	levels := strings.Split(f, "/")
	if strings.HasPrefix(f, "$share/") {
		if len(levels) < 3 || levels[1] == "" {
			return fmt.Errorf("shared subscription '%s' must be '$share/<group>/<filter>'", f)
		}
		levels = levels[2:]
	}
	for i, l := range levels {
		if strings.Contains(l, "#") && (l != "#" || i != len(levels)-1) {
			return fmt.Errorf("topic filter '%s': '#' must be a whole level and the last one", f)
		}
		if strings.Contains(l, "+") && l != "+" {
			return fmt.Errorf("topic filter '%s': '+' must be a whole level", f)
		}
	}
	return nil
}

// checkTopicName checks a topic to publish to: no wildcards.
func checkTopicName(s string) error {
	if s == "" {
		return errors.New("empty topic")
	}
	if strings.ContainsAny(s, "+#") {
		return fmt.Errorf("topic '%s' has a wildcard ('+' or '#'): a message is published to one topic", s)
	}
	return nil
}

// identity says what a table reads or writes: the server and the topics
// (and the shared group, which decides which messages a source gets).
func (c *config) identity() string {
	s := "mqtt " + c.server + " topic=" + strings.Join(c.topics, ";")
	if c.group != "" {
		s += " group=" + c.group
	}
	return s
}

// metadataTypes are the METADATA keys of the connector with their types.
var metadataTypes = map[string]string{
	"topic":          "STRING NOT NULL",
	"qos":            "INT NOT NULL",
	"retained":       "BOOLEAN NOT NULL",
	"duplicate":      "BOOLEAN NOT NULL",
	"message-id":     "INT NOT NULL",
	"properties":     "MAP<STRING, STRING> NOT NULL",
	"content-type":   "STRING NULL",
	"response-topic": "STRING NULL",
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
		case "topic", "content-type", "response-topic":
			fits = k.IsString()
		case "qos", "message-id":
			fits = k == types.KindInt || k == types.KindBigInt || k == types.KindSmallInt
		case "retained", "duplicate":
			fits = k == types.KindBoolean
		case "properties":
			fits = k == types.KindMap && m.Type.Elem != nil && m.Type.Value != nil &&
				m.Type.Elem.Kind.IsString() && m.Type.Value.Kind.IsString()
		}
		if !fits {
			return fmt.Errorf("column '%s': METADATA '%s' is %s and cannot be read as %s", m.Name, m.Key, want, m.Type)
		}
	}
	return nil
}
