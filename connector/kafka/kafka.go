package kafka

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/internal/brokerwatch"
	"github.com/sluicesql/sluice/types"
)

// metadataTimeout bounds the metadata requests made while a table's
// source or sink is created and while a partition is opened.
const metadataTimeout = 30 * time.Second

// Factory builds 'kafka' sources and sinks.
type Factory struct{}

// New returns the 'kafka' connector factory.
func New() Factory { return Factory{} }

// Name implements connector.Factory.
func (Factory) Name() string { return "kafka" }

// ProvidesMetadata implements connector.MetadataFactory.
func (Factory) ProvidesMetadata(key string) bool { _, ok := metadataTypes[key]; return ok }

// valueFormatKey is the option naming a kafka table's value format.
func valueFormatKey(t connector.Table) string {
	if _, ok := t.Options["format"]; ok {
		return "format"
	}
	return "value.format"
}

// ProducesChangelog implements connector.ChangelogSource: a table whose
// value format is a changelog format (debezium-json, ...) reads as a
// changelog.
func (Factory) ProducesChangelog(t connector.Table, env connector.Env) bool {
	return connector.FormatIsChangelog(t, env, valueFormatKey(t))
}

// AcceptsChangelog implements connector.ChangelogSink: a table whose value
// format is a changelog format takes updates and deletes.
func (Factory) AcceptsChangelog(t connector.Table, env connector.Env) bool {
	return connector.FormatIsChangelog(t, env, valueFormatKey(t))
}

// UpsertFactory builds 'upsert-kafka' sources and sinks: a topic read and
// written as a changelog keyed by the table's primary key.
type UpsertFactory struct{}

// NewUpsert returns the 'upsert-kafka' connector factory.
func NewUpsert() UpsertFactory { return UpsertFactory{} }

// Name implements connector.Factory.
func (UpsertFactory) Name() string { return "upsert-kafka" }

// ProducesChangelog implements connector.ChangelogSource: an upsert-kafka
// table is read as a changelog.
func (UpsertFactory) ProducesChangelog(connector.Table, connector.Env) bool { return true }

// ProducesUpserts implements connector.UpsertSource: its changelog is an
// upsert stream keyed by the primary key.
func (UpsertFactory) ProducesUpserts(connector.Table) bool { return true }

// ProvidesMetadata implements connector.MetadataFactory.
func (UpsertFactory) ProvidesMetadata(key string) bool { _, ok := metadataTypes[key]; return ok }

// AcceptsChangelog implements connector.ChangelogSink: an upsert-kafka
// table takes updates and deletes when it has a primary key.
func (UpsertFactory) AcceptsChangelog(t connector.Table, _ connector.Env) bool {
	return len(t.PrimaryKey) > 0
}

// Options both connectors read.
var commonOptions = []string{
	"connector", "topic", "properties.bootstrap.servers",
	"key.format", "key.fields-prefix", "value.format", "value.fields-include",
	"scan.bounded.mode", "scan.bounded.timestamp-millis", "scan.bounded.specific-offsets",
	"scan.watermark.idle-timeout", "scan.parallelism",
	"sink.delivery-guarantee", "sink.transactional-id-prefix", "sink.transaction.interval",
	"sink.parallelism",
}

var kafkaOptions = append(append([]string{
	"topic-pattern", "format", "key.fields",
	"scan.startup.mode", "scan.startup.timestamp-millis", "scan.startup.specific-offsets",
	"scan.topic-partition-discovery.interval",
	"sink.partitioner", "sink.semantic",
}, commonOptions...), connector.ErrorPolicyOptions()...)

var upsertOptions = append(append([]string{
	"sink.buffer-flush.max-rows", "sink.buffer-flush.interval",
}, commonOptions...), connector.ErrorPolicyOptions()...)

// config is what a table's options say, shared by its source and sink.
type config struct {
	connName string
	table    string
	upsert   bool
	// changelog: the value format is a changelog format (debezium-json,
	// ...): a record gives any number of rows of any kind.
	changelog bool

	topics      []string       // 'topic': one or more names
	pattern     *regexp.Regexp // 'topic-pattern', anchored
	patternText string         // 'topic-pattern' as written

	formats *format.Registry
	brokers []string
	// watch tells the job's log at once when a broker cannot be reached.
	watch   *brokerwatch.Watch
	groupID string
	props   properties

	schema types.Schema // physical columns

	valFmtName string // the format's name
	valPrefix  string // prefix of the value format's options and error policy
	valFormat  format.Factory
	valOpts    map[string]string
	valIdx     []int // physical columns of the value, in the value's order
	valSchema  types.Schema

	keyFmtName string
	keyFormat  format.Factory
	keyOpts    map[string]string
	keyIdx     []int // physical columns of the key, in the key's order
	keySchema  types.Schema
	// valueHasKey: every key column is also in the value, which then
	// provides it (as Flink does: the value's fields win).
	valueHasKey bool
}

func parseConfig(t connector.Table, env connector.Env, upsert bool) (*config, error) {
	c := &config{connName: "kafka", table: t.Name, upsert: upsert, schema: t.Schema,
		watch: brokerwatch.New("kafka table '"+t.Name+"'", env.Logf)}
	known := kafkaOptions
	if upsert {
		c.connName, known = "upsert-kafka", upsertOptions
	}
	o := t.Options

	// Formats first: their names are the prefixes of their options.
	valKey := "value.format"
	if _, ok := o["format"]; ok && !upsert {
		if _, both := o["value.format"]; both {
			return nil, errors.New("options 'format' and 'value.format' cannot both be set")
		}
		valKey = "format"
	}
	var err error
	if c.valFmtName, err = o.Required(valKey); err != nil {
		if upsert {
			return nil, err
		}
		return nil, errors.New("missing required option 'format' (or 'value.format')")
	}
	c.valPrefix = c.valFmtName
	if valKey == "value.format" {
		c.valPrefix = "value." + c.valFmtName
	}
	prefixes := []string{"properties.", c.valPrefix + "."}
	c.keyFmtName = o["key.format"]
	if c.keyFmtName != "" {
		prefixes = append(prefixes, "key."+c.keyFmtName+".")
	}
	if err := o.CheckKnown(c.connName, known, prefixes...); err != nil {
		return nil, err
	}
	if env.Formats == nil {
		return nil, fmt.Errorf("%s: no format registry", c.connName)
	}
	c.formats = env.Formats
	if c.valFormat, err = env.Formats.Lookup(c.valFmtName); err != nil {
		return nil, err
	}
	c.valOpts = o.WithPrefix(c.valPrefix + ".")
	if format.IsChangelog(c.valFormat) {
		if upsert {
			return nil, fmt.Errorf("upsert-kafka: value format '%s' is a changelog format; upsert-kafka takes an insert-only format (the record key and tombstones carry the changes): use the 'kafka' connector with it", c.valFmtName)
		}
		c.changelog = true
	}

	if err := c.parseTopics(o); err != nil {
		return nil, err
	}
	servers, err := o.Required("properties.bootstrap.servers")
	if err != nil {
		return nil, err
	}
	for _, s := range strings.Split(servers, ",") {
		if s = strings.TrimSpace(s); s != "" {
			c.brokers = append(c.brokers, s)
		}
	}
	c.groupID = o["properties.group.id"]
	if c.props, err = parseProperties(o.WithPrefix("properties.")); err != nil {
		return nil, err
	}
	if err := c.parseFields(t); err != nil {
		return nil, err
	}
	// Build a decoder and an encoder now so that bad format options fail
	// when the table is used, not when the first record arrives.
	if _, err := c.valFormat.NewDecoder(c.valSchema, c.valOpts); err != nil {
		return nil, err
	}
	if c.keyFormat != nil {
		if _, err := c.keyFormat.NewDecoder(c.keySchema, c.keyOpts); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (c *config) parseTopics(o connector.Options) error {
	topic, hasTopic := o["topic"]
	pattern, hasPattern := o["topic-pattern"]
	switch {
	case hasTopic && hasPattern:
		return errors.New("options 'topic' and 'topic-pattern' cannot both be set")
	case hasPattern:
		re, err := regexp.Compile("^(?:" + pattern + ")$")
		if err != nil {
			return fmt.Errorf("option 'topic-pattern': cannot compile %q: %w", pattern, err)
		}
		c.pattern, c.patternText = re, pattern
		return nil
	case !hasTopic:
		if c.upsert {
			return errors.New("missing required option 'topic'")
		}
		return errors.New("missing required option 'topic' (or 'topic-pattern')")
	}
	for _, s := range strings.Split(topic, ";") {
		if s = strings.TrimSpace(s); s != "" {
			c.topics = append(c.topics, s)
		}
	}
	if len(c.topics) == 0 {
		return errors.New("option 'topic' names no topic")
	}
	return nil
}

// parseFields splits the physical columns between the key and the value.
func (c *config) parseFields(t connector.Table) error {
	o := t.Options
	var keyNames []string
	if c.upsert {
		if len(t.PrimaryKey) == 0 {
			return errors.New("an upsert-kafka table requires a PRIMARY KEY (... NOT ENFORCED): its columns are the record key")
		}
		if c.keyFmtName == "" {
			return errors.New("missing required option 'key.format'")
		}
		keyNames = t.PrimaryKey
	} else if kf, ok := o["key.fields"]; ok {
		for _, s := range strings.Split(kf, ";") {
			if s = strings.TrimSpace(s); s != "" {
				keyNames = append(keyNames, s)
			}
		}
		if len(keyNames) == 0 {
			return errors.New("option 'key.fields' names no column")
		}
		if c.keyFmtName == "" {
			return errors.New("option 'key.fields' requires option 'key.format'")
		}
	} else if c.keyFmtName != "" {
		return errors.New("option 'key.format' requires option 'key.fields' (the columns that make up the key)")
	}

	include := strings.ToUpper(strings.TrimSpace(o.String("value.fields-include", "ALL")))
	if include != "ALL" && include != "EXCEPT_KEY" {
		return fmt.Errorf("option 'value.fields-include': unsupported value '%s' (expected 'ALL' or 'EXCEPT_KEY')", o["value.fields-include"])
	}
	prefix := o["key.fields-prefix"]
	if prefix != "" && include == "ALL" {
		return errors.New("option 'key.fields-prefix' requires 'value.fields-include' = 'EXCEPT_KEY'")
	}

	isKey := make([]bool, t.Schema.Len())
	for _, name := range keyNames {
		i := t.Schema.Index(name)
		if i < 0 {
			return fmt.Errorf("key column '%s' is not a physical column of the table (columns: %s)", name, strings.Join(t.Schema.Names(), ", "))
		}
		if isKey[i] {
			return fmt.Errorf("key column '%s' is listed twice", name)
		}
		col := t.Schema.Columns[i]
		if !strings.HasPrefix(col.Name, prefix) {
			return fmt.Errorf("key column '%s' does not start with the 'key.fields-prefix' '%s'", col.Name, prefix)
		}
		isKey[i] = true
		c.keyIdx = append(c.keyIdx, i)
		col.Name = strings.TrimPrefix(col.Name, prefix)
		col.Type = col.Type.WithoutTimeAttr()
		c.keySchema.Columns = append(c.keySchema.Columns, col)
	}
	for i, col := range t.Schema.Columns {
		if include == "EXCEPT_KEY" && isKey[i] {
			continue
		}
		col.Type = col.Type.WithoutTimeAttr()
		c.valIdx = append(c.valIdx, i)
		c.valSchema.Columns = append(c.valSchema.Columns, col)
	}
	if len(c.valIdx) == 0 {
		return errors.New("the value has no columns: every physical column is in the key and 'value.fields-include' is 'EXCEPT_KEY'")
	}
	c.valueHasKey = include == "ALL"
	if c.keyFmtName != "" {
		var err error
		if c.keyFormat, err = c.formats.Lookup(c.keyFmtName); err != nil {
			return err
		}
		c.keyOpts = o.WithPrefix("key." + c.keyFmtName + ".")
		if format.IsChangelog(c.keyFormat) {
			return fmt.Errorf("key format '%s' is a changelog format; the key takes an insert-only format such as 'json' or 'raw'", c.keyFmtName)
		}
	}
	return nil
}

// identityValue reports whether the value holds every physical column in
// order, so that it decodes straight into a row.
func (c *config) identityValue() bool {
	if len(c.valIdx) != c.schema.Len() {
		return false
	}
	for i, j := range c.valIdx {
		if i != j {
			return false
		}
	}
	return true
}

// newClient returns a client of the table's cluster with the options its
// properties ask for, plus extra.
func (c *config) newClient(extra ...kgo.Opt) (*kgo.Client, error) {
	opts := append([]kgo.Opt{kgo.SeedBrokers(c.brokers...), c.watch.Opt()}, c.props.common...)
	opts = append(opts, extra...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("cannot create kafka client for %s: %w", strings.Join(c.brokers, ","), err)
	}
	return cl, nil
}

// waitBrokers calls f (with a context bounded by metadataTimeout) until
// it succeeds or fails otherwise than by brokers it cannot reach, for at
// most 'properties.default.api.timeout.ms' (see brokerwatch.Wait). A
// certificate that fails is not waited for: its error says which
// 'properties.ssl.*' to check.
func (c *config) waitBrokers(ctx context.Context, f func(ctx context.Context) error) error {
	err := brokerwatch.Wait(ctx, c.props.apiTimeout, c.brokers, "'properties.default.api.timeout.ms'", func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, metadataTimeout)
		defer cancel()
		return f(ctx)
	})
	return c.props.security.Classify(err)
}

// partition is one partition of one topic.
type partition struct {
	topic string
	part  int32
}

// listPartitions returns the partitions of the table's topics, sorted by
// topic (in the order listed, or by name for a pattern) then partition.
func (c *config) listPartitions(ctx context.Context, adm *kadm.Client) ([]partition, error) {
	tds, err := adm.ListTopics(ctx, c.topics...)
	if err != nil {
		return nil, fmt.Errorf("cannot list topics on %s: %w", strings.Join(c.brokers, ","), err)
	}
	topics := c.topics
	if c.pattern != nil {
		topics = nil
		for _, name := range tds.Names() {
			if c.pattern.MatchString(name) && !tds[name].IsInternal {
				topics = append(topics, name)
			}
		}
		if len(topics) == 0 {
			return nil, fmt.Errorf("no topic matches 'topic-pattern' '%s'", c.patternText)
		}
	}
	var out []partition
	for _, name := range topics {
		td, ok := tds[name]
		if !ok || td.Err != nil {
			why := "it does not exist"
			if ok && !errors.Is(td.Err, kerr.UnknownTopicOrPartition) {
				why = td.Err.Error()
			}
			return nil, fmt.Errorf("cannot read metadata of topic '%s': %s", name, why)
		}
		ps := make([]int32, 0, len(td.Partitions))
		for p := range td.Partitions {
			ps = append(ps, p)
		}
		sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
		for _, p := range ps {
			out = append(out, partition{topic: name, part: p})
		}
	}
	return out, nil
}

// parseSpecificOffsets parses 'partition:0,offset:42;partition:1,offset:300'.
func parseSpecificOffsets(key, v string) (map[int32]int64, error) {
	out := map[int32]int64{}
	for _, item := range strings.Split(v, ";") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		var part, off int64 = -1, -1
		for _, kv := range strings.Split(item, ",") {
			k, val, ok := strings.Cut(strings.TrimSpace(kv), ":")
			n, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64)
			if !ok || err != nil || n < 0 {
				return nil, fmt.Errorf("option '%s': cannot parse %q (expected 'partition:0,offset:42;partition:1,offset:300')", key, item)
			}
			var dst *int64
			switch k = strings.TrimSpace(k); k {
			case "partition":
				dst = &part
			case "offset":
				dst = &off
			default:
				return nil, fmt.Errorf("option '%s': unknown key '%s' in %q (expected 'partition' and 'offset')", key, k, item)
			}
			if *dst >= 0 {
				return nil, fmt.Errorf("option '%s': %q gives '%s' twice", key, item, k)
			}
			*dst = n
		}
		if part < 0 || off < 0 || part > 1<<31-1 {
			return nil, fmt.Errorf("option '%s': %q needs both a partition and an offset", key, item)
		}
		if _, dup := out[int32(part)]; dup {
			return nil, fmt.Errorf("option '%s' lists partition %d twice", key, part)
		}
		out[int32(part)] = off
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("option '%s' lists no partition", key)
	}
	return out, nil
}
