package nats_test

import (
	"strings"
	"testing"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/connector/format/json"
	"github.com/sluicesql/sluice/connector/nats"
	"github.com/sluicesql/sluice/types"
)

// TestOptionErrors lists invalid tables beside the error each gets.
func TestOptionErrors(t *testing.T) {
	f := format.NewRegistry()
	f.Register(json.New())
	env := connector.Env{Formats: f}
	schema := types.Schema{Columns: []types.Column{{Name: "n", Type: types.Type{Kind: types.KindInt}}}}
	for _, c := range []struct {
		sink bool
		opts string // k=v;k=v added to a valid table
		want string
	}{
		{false, "servers=127.0.0.1:4222", "option 'servers' must list URLs such as 'nats://127.0.0.1:4222', not '127.0.0.1:4222'"},
		{false, "servers=ws://h:4222", "scheme 'ws' is not supported yet"},
		{false, "servers=tls://h:4222;tls.key-file=k.pem", "nats: option 'tls.key-file' needs 'tls.cert-file'"},
		{true, "tls.ca-file=/nonexistent/ca.pem", "nats: option 'tls.ca-file': cannot read the CA certificates: open /nonexistent/ca.pem"},
		{true, "tls.server_name=h", `unsupported option 'tls.server_name' (did you mean "tls.server-name"?)`},
		{false, "servers=nats://u:p@h:4222", "credentials go in 'username' and 'password', 'token' or 'creds-file'"},
		{false, "servers= , ", "option 'servers' names no server"},
		{false, "subject=", "option 'subject' is required"},
		{false, "subject=a.>.b", "'>' a whole token and the last one"},
		{false, "subject=a.b*", "'*' must be a whole token"},
		{false, "subject=a..b", "has an empty token"},
		{false, "password=x", "option 'password' needs 'username'"},
		{false, "username=u;token=t", "set one of them"},
		{false, "queue-group=a.b", "option 'queue-group' must be a name without"},
		{false, "jetstream.durable=d", "option 'jetstream.durable' needs 'jetstream.stream'"},
		{false, "jetstream.stream=S;queue-group=q", "a JetStream source shares its work through 'jetstream.durable'"},
		{false, "jetstream.stream=S;subject=a,b", "names one subject filter, not 2"},
		{false, "jetstream.stream=S;jetstream.deliver-policy=first", "option 'jetstream.deliver-policy' must be 'all', 'last', 'new'"},
		{false, "jetstream.stream=S;jetstream.deliver-policy=by-start-sequence", "needs option 'jetstream.start-sequence'"},
		{false, "jetstream.stream=S;jetstream.start-sequence=0", "must be a stream sequence number (1 or more), not '0'"},
		{false, "jetstream.stream=S;jetstream.start-time=yesterday", "'yesterday' is not a time"},
		{false, "jetstream.stream=S;jetstream.deliver-policy=new;jetstream.start-sequence=5", "go with 'jetstream.deliver-policy'"},
		{false, "jetstream.stream=S;jetstream.ack-wait=10 s", "is for a durable consumer ('jetstream.durable')"},
		{false, "jetstream.stream=S;jetstream.durable=d;jetstream.ack-wait=10 ms", "must be at least 1 s"},
		{false, "jetstream.stream=S;jetstream.durable=d;jetstream.max-ack-pending=0", "must be between 1 and"},
		{false, "jetstream.stream=a.b", "option 'jetstream.stream' must be a name without"},
		{false, "jetstream.durabel=d", `unsupported option 'jetstream.durabel' (did you mean "jetstream.durable"?)`},
		{false, "sink.flush-timeout=1 s", "option 'sink.flush-timeout' is for a sink table"},
		{false, "format=debezium-json", "unknown format 'debezium-json'"},
		{true, "subject=alerts.*", "has a wildcard"},
		{true, "subject=a,b", "option 'subject' of a sink names one subject, not 2"},
		{true, "sink.delivery-guarantee=exactly-once", "needs a JetStream stream ('jetstream.stream')"},
		{true, "jetstream.stream=S;sink.delivery-guarantee=at-most-once", "must be 'exactly-once' or 'at-least-once'"},
		{true, "sink.delivery-guarantee=maybe", "must be 'exactly-once', 'at-least-once' or 'at-most-once', not 'maybe'"},
		{true, "sink.parallelism=2", "option 'sink.parallelism' must be 1, not 2"},
		{true, "queue-group=q", "option 'queue-group' is for a source table"},
	} {
		o := connector.Options{"connector": "nats", "servers": "nats://127.0.0.1:4222", "subject": "t", "format": "json"}
		for _, kv := range strings.Split(c.opts, ";") {
			k, v, _ := strings.Cut(kv, "=")
			o[k] = v
		}
		tbl := connector.Table{Name: "m", Schema: schema, Options: o}
		var err error
		if c.sink {
			_, err = nats.Factory{}.CreateSink(tbl, env)
		} else {
			_, err = nats.Factory{}.CreateSource(tbl, env)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v\nwant %s", c.opts, err, c.want)
		}
	}
}

// TestMetadataTypes: a METADATA column must be declared with a type that
// holds the value.
func TestMetadataTypes(t *testing.T) {
	f := format.NewRegistry()
	f.Register(json.New())
	env := connector.Env{Formats: f}
	schema := types.Schema{Columns: []types.Column{{Name: "n", Type: types.Type{Kind: types.KindInt}}}}
	o := connector.Options{"connector": "nats", "servers": "nats://127.0.0.1:4222", "subject": "t", "format": "json"}
	for _, c := range []struct {
		key  string
		typ  types.Type
		want string
	}{
		{"subject", types.Type{Kind: types.KindInt}, "METADATA 'subject' is STRING NOT NULL and cannot be read as INT"},
		{"sequence", types.Type{Kind: types.KindInt}, "METADATA 'sequence' is BIGINT NULL"},
		{"nope", types.Type{Kind: types.KindInt}, "unknown METADATA key 'nope'"},
	} {
		tbl := connector.Table{Name: "m", Schema: schema, Options: o, Metadata: []connector.MetadataColumn{{Name: "x", Key: c.key, Type: c.typ}}}
		_, err := nats.Factory{}.CreateSource(tbl, env)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v\nwant %s", c.key, err, c.want)
		}
	}
}
