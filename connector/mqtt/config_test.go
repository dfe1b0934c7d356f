package mqtt_test

import (
	"strings"
	"testing"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/connector/format/json"
	"github.com/sluicesql/sluice/connector/mqtt"
	"github.com/sluicesql/sluice/types"
)

// TestOptionErrors lists invalid tables beside the error each gets.
func TestOptionErrors(t *testing.T) {
	f := format.NewRegistry()
	f.Register(json.New())
	env := connector.Env{Formats: f}
	schema := types.Schema{Columns: []types.Column{{Name: "n", Type: types.Type{Kind: types.KindInt}}, {Name: "s", Type: types.Type{Kind: types.KindVarChar}}}}
	for _, c := range []struct {
		sink bool
		opts string // k=v;k=v added to a valid table
		want string
	}{
		{false, "server=127.0.0.1:1883", "option 'server' must be a URL such as 'tcp://127.0.0.1:1883', not '127.0.0.1:1883'"},
		{false, "server=ws://h:80", "scheme 'ws' is not supported yet"},
		{false, "tls.ca-file=ca.pem", "option 'tls.ca-file' asks for TLS, but option 'server' = 'tcp://127.0.0.1:1883' is plain MQTT (mqtts:// is MQTT over TLS)"},
		{false, "server=mqtts://h;tls.ca-file=/nonexistent/ca.pem", "mqtt: option 'tls.ca-file': cannot read the CA certificates: open /nonexistent/ca.pem: no such file or directory"},
		{true, "server=ssl://h;tls.cert-file=c.pem", "option 'tls.cert-file' needs 'tls.key-file'"},
		{true, "server=ssl://h;tls.ca_file=ca.pem", `unsupported option 'tls.ca_file' (did you mean "tls.ca-file"?)`},
		{false, "server=tcp://u:p@h:1883", "credentials go in 'username' and 'password'"},
		{false, "topic=a/#/b", "'#' must be a whole level and the last one"},
		{false, "topic=a/b+", "'+' must be a whole level"},
		{false, "qos=3", "option 'qos' must be 0, 1 or 2, not 3"},
		{false, "protocol-version=3", "option 'protocol-version' must be '3.1.1' or '5', not '3'"},
		{false, "scan.retain=true", `unsupported option 'scan.retain' (did you mean "scan.retained"?)`},
		{false, "sink.retained=true", "a source table takes the 'scan.' options"},
		{false, "scan.shared-group=a/b", "option 'scan.shared-group' must be a name without '/'"},
		{false, "scan.session.expiry-interval=0 s", "must be at least 1 s for a persistent session"},
		{false, "format=debezium-json", "unknown format 'debezium-json'"},
		{true, "topic=alerts/+", "has a wildcard"},
		{true, "topic=a|b", "option 'topic' of a sink names one topic, not 2"},
		{true, "sink.topic-column=x", "the table has no column 'x' (columns: n, s)"},
		{true, "sink.topic-column=n", "column 'n' is INT, not a string"},
		{true, "sink.buffer.overflow=block", "must be 'fail' or 'drop-oldest', not 'block'"},
		{true, "scan.retained=true", "a sink table takes the 'sink.' options"},
	} {
		o := connector.Options{"connector": "mqtt", "server": "tcp://127.0.0.1:1883", "topic": "t", "format": "json"}
		for _, kv := range strings.Split(c.opts, ";") {
			k, v, _ := strings.Cut(kv, "=")
			o[k] = strings.ReplaceAll(v, "|", ";")
		}
		tbl := connector.Table{Name: "m", Schema: schema, Options: o}
		var err error
		if c.sink {
			_, err = mqtt.Factory{}.CreateSink(tbl, env)
		} else {
			_, err = mqtt.Factory{}.CreateSource(tbl, env)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v\nwant %s", c.opts, err, c.want)
		}
	}
}
