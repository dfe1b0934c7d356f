// Package over runs OVER aggregation (Flink's OverAggregate): for each
// input row, aggregates over a frame of the rows of its partition ordered
// by a time attribute, ending at the row itself.
//
// Frames: ROWS BETWEEN n PRECEDING AND CURRENT ROW (the row and the n rows
// before it), RANGE BETWEEN d PRECEDING AND CURRENT ROW (the rows whose
// time is at most d before the row's, its peers included), and either with
// UNBOUNDED PRECEDING.
//
// Output: each input row, once, followed by one column per aggregate call.
// It is append-only (+I rows).
//
// Invariants:
//   - Event time: a row is buffered in its partition until the watermark
//     reaches its time, then emitted in time order (rows with equal times
//     in arrival order). A row at or behind the watermark is late: it is
//     dropped and counted in Metrics.LateRows. The watermark goes on after
//     the rows it released, so every emitted row is ahead of it downstream.
//   - RANGE: rows with the same time are peers; each sees all of them. ROWS
//     counts rows, peers or not.
//   - Processing time: each row is emitted as it arrives, over the rows
//     of its partition that arrived before it.
//   - A frame is kept as accumulators that retract the rows leaving it;
//     only the columns the aggregates read are kept of those rows. ROWS
//     keeps the last n rows; RANGE keeps the rows within d of the newest,
//     and drops a partition once the watermark has passed its newest row
//     by more than d (nothing later can reach back to it).
//   - Replays are dropped by origin offset, as in every stateful operator.
//   - Checkpoint writes the partitions changed since the last one, each
//     whole (accumulators, frame rows, buffered rows), and the watermark.
package over
