// Package groupagg runs the non-windowed GROUP BY of a streaming query: an
// updating aggregate that keeps one accumulator group per key for as long as
// the key has rows, and emits Flink's changelog of the results.
//
// Changelog:
//   - The first result of a key is emitted as +I; a later different result
//     as the pair -U (the result emitted before) and +U (the new one); a key
//     whose result did not change emits nothing.
//   - Input rows of kind +I and +U accumulate; -U and -D retract. When
//     retractions bring a key's row count to zero its last result is
//     emitted as -D and the key is forgotten. A retraction for a key that
//     has no rows is ignored, as in Flink.
//
// Invariants:
//   - Emission is per input batch (a mini-batch): the rows of a batch are
//     folded in first, then each key the batch changed emits at most one
//     update, compared with the last result emitted for it. A hot key
//     updated many times in one batch emits one -U/+U pair. Keys emit in
//     the order the batch first touched them, so output is deterministic.
//     With Config.MiniBatchLatency the batch spans input batches: it is
//     emitted when the latency has passed since its first row (checked on
//     each batch and on exec.Timed ticks), when MiniBatchSize rows are
//     pending, at a checkpoint (before the state is written, so that the
//     stored last results are the emitted ones) and at Finish.
//   - With Config.TTL a key not updated for the TTL (processing time) is
//     forgotten without output, as in Flink, and counted in
//     Metrics.ExpiredKeys; a key with a pending update never expires.
//   - After each batch (and tick, checkpoint and Finish) the task's
//     exec.StateGauge holds its keys and an estimate of their bytes.
//   - Output rows are the key columns (in Config.Keys order) followed by one
//     value per call, and carry no origin (types.NoOrigin). An output row
//     stands for many input rows, from any partitions, so no single
//     (partition, offset) names it; and offset dedup downstream would drop
//     the +U of every -U/+U pair, which shares its source row. Duplicates
//     after a restart are for the sink's keyed upsert (or the transactional
//     commit) to absorb, not for offset dedup.
//   - Every input row's origin passes the operator's state.Offsets first: a
//     replay (offset not above the partition's last) is dropped and counted
//     in Metrics.ReplayRows.
//   - Memory is one entry per live key: its key values, accumulators, row
//     count and last emitted result. Keys are encoded with types.AppendKey
//     into a reused buffer; NULL keys group together.
//   - With Config.AppendOnlyInput the accumulators keep no retraction
//     history (agg.Call.AppendOnly) and a -U/-D input row fails the
//     operator.
//   - Group state reaches the operator's state.Store only at Checkpoint
//     (dirty keys written, emptied keys deleted, then Store.Checkpoint, so
//     groups and offsets become durable together); Open restores it.
//     Watermarks and Finish are forwarded: results are already emitted.
package groupagg
