// Package config lists the session options (the keys of SET, of
// sluice.Options.Config and of `sluice -D`) that the engine reads, with the
// check of each value and the parsers of the values the engine uses.
//
// The list is the one place a key is named: the code that reads an option
// reads it by the constant declared here, and SET warns of a key that is
// not in the list (Flink passes unknown keys through, and so does Sluice,
// but a misspelt key would otherwise change nothing without a word).
package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/internal/suggest"
	"github.com/sluicesql/sluice/plan"
)

// The keys of the options the engine reads.
const (
	ParallelismDefault         = "parallelism.default"
	PipelineName               = "pipeline.name"
	PipelineSharedSource       = "pipeline.shared-source"
	CheckpointingInterval      = "execution.checkpointing.interval"
	LocalTimeZone              = "table.local-time-zone"
	SourceIdleTimeout          = "table.exec.source.idle-timeout"
	StateTTL                   = "table.exec.state.ttl"
	StateWarnSize              = "table.exec.state.warn-size"
	MiniBatchEnabled           = "table.exec.mini-batch.enabled"
	MiniBatchAllowLatency      = "table.exec.mini-batch.allow-latency"
	MiniBatchSize              = "table.exec.mini-batch.size"
	SinkNotNullEnforcer        = "table.exec.sink.not-null-enforcer"
	SinkTypeLengthEnforcer     = "table.exec.sink.type-length-enforcer"
	DynamicTableOptions        = "table.dynamic-table-options.enabled"
	ReuseSourceEnabled         = "table.optimizer.reuse-source-enabled"
	StateDir                   = "state.dir"
	StateBackend               = "state.backend"
	StateStartFresh            = "state.start-fresh"
	StateAllowLoss             = "state.allow-loss"
	StateKafkaBootstrapServers = "state.kafka.bootstrap.servers"
	StateKafkaTopic            = "state.kafka.topic"
	StateKafkaTransactionalID  = "state.kafka.transactional-id"
	ClusterGroupID             = "cluster.group-id"
	ClusterInstanceID          = "cluster.instance-id"
	ClusterSessionTimeout      = "cluster.session-timeout"
	ClusterRebalanceTimeout    = "cluster.rebalance-timeout"
	ClusterTransactionTimeout  = "cluster.transaction-timeout"
	WasmMemoryLimit            = "wasm.memory-limit"
	WasmCallTimeout            = "wasm.call-timeout"
	// Filters of many rules over one source.
	SharedFilters      = "pipeline.shared-filters"
	FilterCacheSize    = "pipeline.filter-cache.size"
	FilterMultiPattern = "pipeline.filter-multi-pattern"
)

// StateKafkaProperties prefixes the security properties of Kafka's
// clients (security.protocol, sasl.*, ssl.*) for the engine's own Kafka
// clients: the state backend, cluster mode, shuffle topics.
const StateKafkaProperties = "state.kafka.properties."

// DefaultFilterCacheSize is the memory the filter caches of an engine
// hold together when 'pipeline.filter-cache.size' is not set.
const DefaultFilterCacheSize = 64 << 20

// option is a key the engine reads and the check of its value at SET
// (nil: any value is taken, and checked where it is used).
type option struct {
	key   string
	check func(value string) error
}

// options are every key the engine reads.
var options = []option{
	{ParallelismDefault, func(v string) error { _, err := Parallelism(v); return err }},
	{PipelineName, nil},
	{PipelineSharedSource, checkBool(PipelineSharedSource)},
	{CheckpointingInterval, func(v string) error { _, err := parseCheckpointInterval(v); return err }},
	{LocalTimeZone, func(v string) error { _, err := Location(v); return err }},
	{SourceIdleTimeout, checkDuration(SourceIdleTimeout)},
	{StateTTL, checkDuration(StateTTL)},
	{StateWarnSize, func(v string) error { _, err := parseStateWarnSize(v); return err }},
	{MiniBatchEnabled, checkBool(MiniBatchEnabled)},
	{MiniBatchAllowLatency, checkDuration(MiniBatchAllowLatency)},
	{MiniBatchSize, func(v string) error { _, err := MiniBatchRows(v); return err }},
	{SinkNotNullEnforcer, func(v string) error { _, err := parseNotNullEnforcer(v); return err }},
	{SinkTypeLengthEnforcer, func(v string) error { _, err := parseTypeLengthEnforcer(v); return err }},
	{DynamicTableOptions, checkBool(DynamicTableOptions)},
	{ReuseSourceEnabled, checkBool(ReuseSourceEnabled)},
	{StateDir, nil},
	{StateBackend, nil},
	{StateStartFresh, checkBool(StateStartFresh)},
	{StateAllowLoss, checkBool(StateAllowLoss)},
	{StateKafkaBootstrapServers, nil},
	{StateKafkaTopic, nil},
	{StateKafkaTransactionalID, nil},
	{ClusterGroupID, nil},
	{ClusterInstanceID, nil},
	{ClusterSessionTimeout, checkDuration(ClusterSessionTimeout)},
	{ClusterRebalanceTimeout, checkDuration(ClusterRebalanceTimeout)},
	{ClusterTransactionTimeout, checkDuration(ClusterTransactionTimeout)},
	{WasmMemoryLimit, func(v string) error { _, err := WasmMemory(map[string]string{WasmMemoryLimit: v}); return err }},
	{WasmCallTimeout, checkDuration(WasmCallTimeout)},
	{SharedFilters, checkBool(SharedFilters)},
	{FilterMultiPattern, checkBool(FilterMultiPattern)},
	{FilterCacheSize, func(v string) error { _, err := FilterCache(map[string]string{FilterCacheSize: v}); return err }},
}

func find(key string) *option {
	for i := range options {
		if options[i].key == key {
			return &options[i]
		}
	}
	return nil
}

// Known reports whether the engine reads key.
func Known(key string) bool { return find(key) != nil || kafkaSecurityKey(key) }

// kafkaSecurityKey reports whether key is a security property of the
// engine's Kafka clients ('state.kafka.properties.ssl.truststore.location').
func kafkaSecurityKey(key string) bool {
	p, ok := strings.CutPrefix(key, StateKafkaProperties)
	return ok && (p == "security.protocol" || strings.HasPrefix(p, "sasl.") || strings.HasPrefix(p, "ssl."))
}

// KafkaProperties returns the Kafka client properties cfg sets for the
// engine's own Kafka clients, without their 'state.kafka.properties.'
// prefix (checked where the clients are made, as they go together).
func KafkaProperties(cfg map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range cfg {
		if p, ok := strings.CutPrefix(k, StateKafkaProperties); ok {
			out[p] = v
		}
	}
	return out
}

// Keys returns the keys the engine reads, sorted.
func Keys() []string {
	out := make([]string, len(options))
	for i, o := range options {
		out[i] = o.key
	}
	slices.Sort(out)
	return out
}

// Nearest returns the known key closest to key, if key looks like a typo
// of it (suggest.Nearest, here over the whole key and over its last
// part), or "".
func Nearest(key string) string {
	if n := suggest.Nearest(key, Keys()); n != "" {
		return n
	}
	// A typo in the last part of a long key ("...checkpointing.intervall")
	// is within the edit distance of the whole key's bound; one in a
	// middle part is found here when the other parts match.
	dot := strings.LastIndexByte(key, '.')
	if dot < 0 {
		return ""
	}
	var same []string
	for _, k := range Keys() {
		if i := strings.LastIndexByte(k, '.'); i >= 0 && strings.EqualFold(k[:i], key[:dot]) {
			same = append(same, k[i+1:])
		}
	}
	if n := suggest.Nearest(key[dot+1:], same); n != "" {
		return key[:dot+1] + n
	}
	return ""
}

// Check checks value for key, if the engine reads key and checks it at
// SET. Unknown keys pass: Flink passes them through.
func Check(key, value string) error {
	if o := find(key); o != nil && o.check != nil {
		return o.check(value)
	}
	return nil
}

// Unknown returns the warning for a key the engine does not read, naming
// the nearest known key; "" for a known key. origin, if set, says where
// the key was given.
func Unknown(key, origin string) string {
	if Known(key) {
		return ""
	}
	if origin != "" {
		origin = " (" + origin + ")"
	}
	msg := fmt.Sprintf("Sluice does not read the option '%s'%s: it has no effect", key, origin)
	if strings.HasPrefix(key, StateKafkaProperties) {
		return msg + fmt.Sprintf(" (of the Kafka client properties under '%s', the engine reads security.protocol, sasl.* and ssl.* only)", StateKafkaProperties)
	}
	if n := Nearest(key); n != "" {
		msg += fmt.Sprintf(" (did you mean '%s'?)", n)
	}
	return msg
}

func checkDuration(key string) func(string) error {
	return func(v string) error {
		if _, err := connector.ParseDuration(v); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		return nil
	}
}

func checkBool(key string) func(string) error {
	return func(v string) error {
		if _, err := strconv.ParseBool(v); err != nil {
			return fmt.Errorf("%s must be 'true' or 'false', got '%s'", key, v)
		}
		return nil
	}
}

// Parallelism reads 'parallelism.default': an integer from 1 to
// exec.MaxParallelism.
func Parallelism(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > exec.MaxParallelism {
		return 0, fmt.Errorf("%s must be an integer between 1 and %d (the tasks of each keyed stage), got '%s'",
			ParallelismDefault, exec.MaxParallelism, v)
	}
	return n, nil
}

// Location reads 'table.local-time-zone'.
func Location(v string) (*time.Location, error) {
	loc, err := time.LoadLocation(v)
	if err != nil {
		return nil, fmt.Errorf("%s: unknown time zone '%s'", LocalTimeZone, v)
	}
	return loc, nil
}

// Duration returns the duration cfg sets for key; 0 when it is not set,
// empty or "0".
func Duration(cfg map[string]string, key string) (time.Duration, error) {
	v, ok := cfg[key]
	if !ok || v == "" || v == "0" {
		return 0, nil
	}
	d, err := connector.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", key, err)
	}
	return d, nil
}

// DefaultCheckpointInterval is how often a job whose state is durable
// ('state.dir', or state in Kafka) takes checkpoints unless
// 'execution.checkpointing.interval' says otherwise.
const DefaultCheckpointInterval = time.Second

// minCheckpointInterval is Flink's smallest checkpoint interval.
const minCheckpointInterval = 10 * time.Millisecond

// CheckpointInterval returns 'execution.checkpointing.interval', or def.
func CheckpointInterval(cfg map[string]string, def time.Duration) (time.Duration, error) {
	v, ok := cfg[CheckpointingInterval]
	if !ok {
		return def, nil
	}
	return parseCheckpointInterval(v)
}

// parseCheckpointInterval reads 'execution.checkpointing.interval': 0
// turns checkpoints off (a negative duration does not parse); else it
// must be at least 10 ms, as in Flink: checkpoints back to back would
// each sync the state to disk.
func parseCheckpointInterval(v string) (time.Duration, error) {
	d, err := connector.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", CheckpointingInterval, err)
	}
	if d > 0 && d < minCheckpointInterval {
		return 0, fmt.Errorf("%s must be at least 10 ms (as in Flink), got '%s'", CheckpointingInterval, v)
	}
	return d, nil
}

// StartFresh reads 'state.start-fresh'.
func StartFresh(cfg map[string]string) (bool, error) {
	v, ok := cfg[StateStartFresh]
	if !ok {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s must be 'true' or 'false', got '%s'", StateStartFresh, v)
	}
	return b, nil
}

// AllowStateLoss reads 'state.allow-loss': whether a job may start over
// a state saved by a version of it that read or computed something else,
// keeping the state of what is unchanged and dropping the rest.
func AllowStateLoss(cfg map[string]string) (bool, error) {
	v, ok := cfg[StateAllowLoss]
	if !ok {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s must be 'true' or 'false', got '%s'", StateAllowLoss, v)
	}
	return b, nil
}

// DefaultStateWarnSize is the default of 'table.exec.state.warn-size'.
const DefaultStateWarnSize = 1 << 30

// WarnSize returns 'table.exec.state.warn-size' in bytes: 0 warns never.
func WarnSize(cfg map[string]string) (int64, error) {
	v, ok := cfg[StateWarnSize]
	if !ok {
		return DefaultStateWarnSize, nil
	}
	return parseStateWarnSize(v)
}

func parseStateWarnSize(v string) (int64, error) {
	n, err := connector.ParseMemorySize(v)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", StateWarnSize, err)
	}
	return n, nil
}

// MiniBatchRows reads 'table.exec.mini-batch.size': a positive number of
// rows, or -1 for no bound.
func MiniBatchRows(v string) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n == 0 || n < -1 {
		return 0, fmt.Errorf("%s must be a positive number of rows (or -1: no bound), got '%s'", MiniBatchSize, v)
	}
	return n, nil
}

// DynamicTableOptionsEnabled reads 'table.dynamic-table-options.enabled':
// whether OPTIONS hints may change a table's options (the default, as in
// Flink).
func DynamicTableOptionsEnabled(cfg map[string]string) (bool, error) {
	v, ok := cfg[DynamicTableOptions]
	if !ok {
		return true, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s must be 'true' or 'false', got '%s'", DynamicTableOptions, v)
	}
	return b, nil
}

// ReuseSource reads 'table.optimizer.reuse-source-enabled': whether the
// scans of one table in a job share one source (true, the default, as in
// Flink).
func ReuseSource(cfg map[string]string) (bool, error) {
	return boolOption(cfg, ReuseSourceEnabled, true)
}

// SharedSource reads 'pipeline.shared-source': whether a job's unbounded
// sources read through the engine's shared readers, one per table
// definition and partition for every job that reads it (true, the
// default; see connector/share).
func SharedSource(cfg map[string]string) (bool, error) {
	return boolOption(cfg, PipelineSharedSource, true)
}

// DropNullRows reads 'table.exec.sink.not-null-enforcer': whether a sink
// drops a row with a NULL in a NOT NULL column (DROP) rather than failing
// the job (ERROR, the default), as in Flink.
func DropNullRows(cfg map[string]string) (bool, error) {
	v, ok := cfg[SinkNotNullEnforcer]
	if !ok {
		return false, nil
	}
	return parseNotNullEnforcer(v)
}

func parseNotNullEnforcer(v string) (drop bool, err error) {
	switch strings.ToUpper(strings.TrimSpace(v)) {
	case "ERROR":
		return false, nil
	case "DROP":
		return true, nil
	}
	return false, fmt.Errorf("%s must be 'ERROR' or 'DROP', got '%s'", SinkNotNullEnforcer, v)
}

// TypeLengthEnforcer reads 'table.exec.sink.type-length-enforcer': IGNORE
// (the default), TRIM_PAD or ERROR, in any case, as Flink reads its enum
// options.
func TypeLengthEnforcer(cfg map[string]string) (plan.LengthEnforcer, error) {
	v, ok := cfg[SinkTypeLengthEnforcer]
	if !ok {
		return plan.LengthIgnore, nil
	}
	return parseTypeLengthEnforcer(v)
}

func parseTypeLengthEnforcer(v string) (plan.LengthEnforcer, error) {
	switch strings.ToUpper(strings.TrimSpace(v)) {
	case "IGNORE":
		return plan.LengthIgnore, nil
	case "TRIM_PAD":
		return plan.LengthTrimPad, nil
	case "ERROR":
		return plan.LengthError, nil
	}
	return plan.LengthIgnore, fmt.Errorf("%s must be 'IGNORE', 'TRIM_PAD' or 'ERROR', got '%s'", SinkTypeLengthEnforcer, v)
}

// WasmMemory reads 'wasm.memory-limit': the most linear memory one
// instance of a WebAssembly function may have (a memory size, e.g.
// '64 mb'); 0 when unset (the default applies).
func WasmMemory(cfg map[string]string) (int64, error) {
	v, ok := cfg[WasmMemoryLimit]
	if !ok || v == "" {
		return 0, nil
	}
	n, err := connector.ParseMemorySize(v)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", WasmMemoryLimit, err)
	}
	if n < 64<<10 || n > 4<<30 {
		return 0, fmt.Errorf("%s must be between 64 kb and 4 gb, got '%s'", WasmMemoryLimit, v)
	}
	return n, nil
}

// WasmTimeout reads 'wasm.call-timeout': how long one call into a
// WebAssembly function may run; def when unset, 0 for no limit ('0').
func WasmTimeout(cfg map[string]string, def time.Duration) (time.Duration, error) {
	v, ok := cfg[WasmCallTimeout]
	if !ok || v == "" {
		return def, nil
	}
	return Duration(cfg, WasmCallTimeout)
}

// ShareFilters reads 'pipeline.shared-filters': whether the WHERE clauses
// of a job's queries over one source are evaluated together, with their
// results cached per value (true, the default).
func ShareFilters(cfg map[string]string) (bool, error) {
	return boolOption(cfg, SharedFilters, true)
}

// MultiPattern reads 'pipeline.filter-multi-pattern': whether the pattern
// conditions (LIKE, REGEXP, ...) of a shared filter group over one
// expression are matched in one pass (true, the default) or one by one.
func MultiPattern(cfg map[string]string) (bool, error) {
	return boolOption(cfg, FilterMultiPattern, true)
}

// FilterCache reads 'pipeline.filter-cache.size': the memory the filter
// caches of the engine's jobs may hold together (a memory size, e.g.
// '64 mb'; '0' turns the caches off).
func FilterCache(cfg map[string]string) (int64, error) {
	v, ok := cfg[FilterCacheSize]
	if !ok || v == "" {
		return DefaultFilterCacheSize, nil
	}
	n, err := connector.ParseMemorySize(v)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", FilterCacheSize, err)
	}
	return n, nil
}

// boolOption reads a 'true' or 'false' option; def when unset.
func boolOption(cfg map[string]string, key string, def bool) (bool, error) {
	v, ok := cfg[key]
	if !ok {
		return def, nil
	}
	on, err := strconv.ParseBool(strings.TrimSpace(v))
	if err != nil {
		return false, fmt.Errorf("%s must be 'true' or 'false', got '%s'", key, v)
	}
	return on, nil
}
