package lookupcache

import (
	"fmt"
	"strings"
	"time"

	"github.com/sluicesql/sluice/connector"
)

// Mode is the value of Flink's 'lookup.cache' option.
type Mode int

// The lookup cache modes.
const (
	// None fetches every key from the table.
	None Mode = iota
	// Partial caches the keys fetched, per job, in a Cache.
	Partial
	// Full loads the whole table into the engine's shared store.
	Full
)

func (m Mode) String() string {
	switch m {
	case Partial:
		return "PARTIAL"
	case Full:
		return "FULL"
	}
	return "NONE"
}

// Option keys.
const (
	OptCache             = "lookup.cache"
	OptMaxRows           = "lookup.partial-cache.max-rows"
	OptMaxBytes          = "lookup.partial-cache.max-bytes"
	OptExpireAfterWrite  = "lookup.partial-cache.expire-after-write"
	OptExpireAfterAccess = "lookup.partial-cache.expire-after-access"
	OptCacheMissingKey   = "lookup.partial-cache.cache-missing-key"
	OptMaxRetries        = "lookup.max-retries"
	OptReloadInterval    = "lookup.full-cache.reload-interval"
	OptPeriodicReload    = "lookup.full-cache.periodic-reload.interval"
	OptRefreshInterval   = "refresh-interval"

	// Flink's deprecated spellings, still common in DDL.
	optLegacyMaxRows = "lookup.cache.max-rows"
	optLegacyTTL     = "lookup.cache.ttl"
	optLegacyMissing = "lookup.cache.caching-missing-key"
)

// PartialOptions returns the keys ParseOptions reads for a connector that
// only looks keys up (no FULL mode).
func PartialOptions() []string {
	return []string{OptCache, OptMaxRows, OptMaxBytes, OptExpireAfterWrite, OptExpireAfterAccess,
		OptCacheMissingKey, OptMaxRetries, optLegacyMaxRows, optLegacyTTL, optLegacyMissing}
}

// Options returns every key ParseOptions reads.
func Options() []string {
	return append(PartialOptions(), OptReloadInterval, OptPeriodicReload, OptRefreshInterval)
}

// Settings are the parsed lookup options of a table.
type Settings struct {
	Mode Mode
	// Cache bounds the per-job cache (Partial).
	Cache Config
	// MaxRetries is how many times a failed fetch is tried again.
	MaxRetries int
	// ReloadInterval is how often a Full table is loaded again; 0: never.
	ReloadInterval time.Duration
}

// DefaultMaxRetries is Flink's default for 'lookup.max-retries'.
const DefaultMaxRetries = 3

// ParseOptions reads the lookup options of o. As in Flink, 'lookup.cache'
// is NONE by default (PARTIAL when the deprecated 'lookup.cache.max-rows'
// or 'lookup.cache.ttl' is set), and a PARTIAL cache needs a bound: a
// number of rows or bytes, or an expiry.
func ParseOptions(o connector.Options) (Settings, error) {
	var s Settings
	var err error
	mode := o[OptCache]
	_, legacyRows := o[optLegacyMaxRows]
	_, legacyTTL := o[optLegacyTTL]
	switch strings.ToUpper(strings.TrimSpace(mode)) {
	case "":
		if legacyRows || legacyTTL {
			s.Mode = Partial
		}
	case "NONE":
	case "PARTIAL":
		s.Mode = Partial
	case "FULL":
		s.Mode = Full
	default:
		return s, fmt.Errorf("option '%s': unsupported value '%s' (expected 'NONE', 'PARTIAL' or 'FULL')", OptCache, mode)
	}
	n, err := o.Int(OptMaxRetries, DefaultMaxRetries)
	if err != nil {
		return s, err
	}
	if n < 0 {
		return s, fmt.Errorf("option '%s' must not be negative", OptMaxRetries)
	}
	s.MaxRetries = int(n)

	c := &s.Cache
	if c.MaxRows, err = nonNegInt(o, optLegacyMaxRows, 0); err != nil {
		return s, err
	}
	if c.MaxRows, err = nonNegInt(o, OptMaxRows, c.MaxRows); err != nil {
		return s, err
	}
	if c.MaxBytes, err = o.MemorySize(OptMaxBytes, 0); err != nil {
		return s, err
	}
	if c.ExpireAfterWrite, err = nonNegDuration(o, optLegacyTTL, 0); err != nil {
		return s, err
	}
	if c.ExpireAfterWrite, err = nonNegDuration(o, OptExpireAfterWrite, c.ExpireAfterWrite); err != nil {
		return s, err
	}
	if c.ExpireAfterAccess, err = nonNegDuration(o, OptExpireAfterAccess, 0); err != nil {
		return s, err
	}
	if c.CacheMissingKey, err = o.Bool(optLegacyMissing, true); err != nil {
		return s, err
	}
	if c.CacheMissingKey, err = o.Bool(OptCacheMissingKey, c.CacheMissingKey); err != nil {
		return s, err
	}
	if s.Mode == Partial && *c == (Config{CacheMissingKey: c.CacheMissingKey}) {
		return s, fmt.Errorf("option '%s' = 'PARTIAL' needs a bound: set '%s', '%s', '%s' or '%s'",
			OptCache, OptMaxRows, OptMaxBytes, OptExpireAfterWrite, OptExpireAfterAccess)
	}

	for _, k := range []string{OptRefreshInterval, OptPeriodicReload, OptReloadInterval} {
		if _, ok := o[k]; ok {
			if s.ReloadInterval, err = nonNegDuration(o, k, 0); err != nil {
				return s, err
			}
		}
	}
	return s, nil
}

func nonNegInt(o connector.Options, key string, def int64) (int64, error) {
	n, err := o.Int(key, def)
	if err == nil && n < 0 {
		err = fmt.Errorf("option '%s' must not be negative", key)
	}
	return n, err
}

func nonNegDuration(o connector.Options, key string, def time.Duration) (time.Duration, error) {
	d, err := o.Duration(key, def)
	if err == nil && d < 0 {
		err = fmt.Errorf("option '%s' must not be negative", key)
	}
	return d, err
}
