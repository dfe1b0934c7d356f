// Package types holds Sluice's data model: logical SQL types, typed values,
// schemas, rows and batches.
//
// Invariants:
//   - The zero Value is SQL NULL.
//   - A Value's representation depends only on its Kind; see Value for the
//     encoding of each kind. Values are immutable: the string and the
//     reference fields may be shared freely between rows.
//   - TIMESTAMP and TIMESTAMP_LTZ are microseconds since the Unix epoch
//     (TIMESTAMP is a wall-clock time read as UTC; TIMESTAMP_LTZ is an
//     instant). DATE is days since the epoch, TIME microseconds since
//     midnight. Precision beyond microseconds is truncated.
//   - DECIMAL values carry their scale; the unscaled value lives in an int64
//     while it fits and in a *big.Int when it does not.
package types
