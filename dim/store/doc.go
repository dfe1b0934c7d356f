// Package store is the compact, in-memory index of a dimension table: the
// rows of a table indexed by one set of key columns, for lookup joins.
//
// Layout. Build reduces each row's key to a 128-bit xxh3 hash of the
// canonical encoding of its key values (types.AppendKey, which encodes
// every integer kind as BIGINT, CHAR as VARCHAR and DECIMALs without
// trailing zeros, so that equal SQL values hash alike). The key columns
// themselves are not stored: a row found by its key gets them back from
// the key the caller passed, cast to the table's column types. An
// open-addressing table (linear probing, load factor 0.8, 16 bytes a slot)
// holds one slot per distinct key: 88 bits of the hash and the 40-bit
// address of the key's most recent record. The other columns of a row are
// packed into a record in byte arenas (chunks of 64 MiB); a record begins
// with the distance back to the previous record of its key, so the rows of
// a key that is not unique form a chain. There is no Go object per row and
// no pointer per row for the garbage collector to scan: the table and the
// chunks are pointer-free slices.
//
// Collisions. Two distinct keys are confused only if their hashes agree on
// all 88 stored bits. Among n = 10 million distinct keys the probability
// that any two do is about n²/2⁸⁹ ≈ 1.6·10⁻¹³ per build; a probe for a key
// that is not in the table compares its hash with a few slots, so it
// wrongly matches with a probability of a few in 2⁸⁸ (3·10⁻²⁶): at five
// million lookups a second for a century, about 10⁻¹⁰. Both are far below
// the rate of undetected memory and disk errors of the machines the table
// lives on, so keys are not compared, which is what lets them be dropped.
//
// Memory. Build doubles the table as rows arrive and fits it at the end,
// so a build peaks at about twice the index; BuildSized, given the row
// count (a reload knows the previous one), allocates the table once.
// NewBuilder takes rows one at a time, so that one read of a table builds
// its indexes by several key sets.
// Lookups touch the table and the arena at random: Reader.LookupBatch
// overlaps the cache misses of many keys, and the table and the arena ask
// for transparent huge pages.
//
// Invariants:
//   - An Index is immutable once Build returns; any number of goroutines
//     may look rows up at once, each with its own Reader (Index.Lookup
//     takes one from a pool).
//   - A row with a NULL in a key column is not indexed, and a key with a
//     NULL matches nothing: NULL keys never match, as in SQL.
//   - Strings (and binary values) of looked-up rows point into the arena,
//     which never changes; such a string keeps its whole 64 MiB chunk
//     alive for as long as it is referenced, even after the index is
//     dropped. Config.CopyStrings (which the dim registry sets for tables
//     that reload) and Config.SpillDir copy them out instead, at an
//     allocation per string value.
//   - Nested values (ARRAY, MULTISET, ROW, MAP) are decoded into new
//     slices at every lookup; every other kind is decoded without
//     allocating.
package store
