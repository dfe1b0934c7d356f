// Package lookupcache is the per-job cache of rows fetched by key from a
// dimension table that is looked up on demand (jdbc, redis): a bounded LRU
// cache, by rows and by bytes, whose entries expire after a write or after
// an access, and which can remember that a key has no rows.
//
// It also parses the lookup cache options shared by those connectors
// (Flink's lookup.cache, lookup.partial-cache.*, lookup.max-retries and
// our own lookup.partial-cache.max-bytes) and provides Lookuper, which
// puts a cache and retries in front of a fetch function.
//
// Invariants: a Cache is not safe for concurrent use: one job (one
// goroutine) owns it, or its owner serialises calls, as Lookuper does with
// a mutex that is never held during a fetch. The counters of Stats are
// atomic and may be read from any goroutine. Cached rows are shared with
// the callers of Get and never modified.
package lookupcache
