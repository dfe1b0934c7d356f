// Package state defines where stateful operators keep their state, shaped for
// Sluice's exactly-once scheme: keyed state plus, for every upstream
// partition, the highest offset already folded into that state.
//
// An operator drops a row whose origin offset is not higher than the offset
// recorded for its partition (a replay), folds the others in, and records
// their offsets. Keyed values and offsets are made durable together by
// Checkpoint, so after a restore the two agree.
//
// The in-memory backend keeps everything on the heap; durable backends (a
// local LSM store, a changelog topic) implement the same interfaces.
package state
