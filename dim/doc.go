// Package dim holds the dimension tables of lookup joins: tables loaded in
// full from a connector.FullSource, indexed by the key sets that queries
// look them up by, shared by every job of an engine that declares the same
// table, and reloaded on a schedule.
//
// Invariants:
//
//   - One Table per FullSource.Identity() in a Registry. Acquire counts a
//     user; the Table (its indexes, its source, its reload goroutine) is
//     freed when the last user releases it.
//   - One index per distinct key set (the columns looked up, in ascending
//     order) that some user acquired. The store does not keep key columns
//     apart, so a key set first asked for is built by loading the source
//     again.
//   - The indexes of a Table form one immutable version behind an
//     atomic.Pointer. A reload builds every index of a new version from
//     fresh loads and then swaps the version in: a lookup sees the old
//     version or the new one, never a mix. A failed reload keeps the old
//     version; it is counted and logged.
//   - Loads of one Table (first loads, new key sets, reloads) run one at a
//     time.
package dim
