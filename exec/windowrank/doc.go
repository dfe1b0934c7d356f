// Package windowrank runs window Top-N and window deduplication: ROW_NUMBER,
// RANK or DENSE_RANK OVER (PARTITION BY window_start, window_end, ...
// ORDER BY ...) bounded by N, over rows that carry their window (the
// output of a window TVF, a window aggregate or another window Top-N).
//
// Rows are buffered per window and partition; when the watermark reaches
// a window's last instant (window_end - 1 ms, as in exec/window) the top N
// rows of each of its partitions are emitted once, as inserts, followed by
// their number, and the window's state is dropped. The output is
// append-only.
//
// Invariants:
//   - The input is insert-only; -U and -D rows fail the operator.
//   - Only what can still be emitted is kept: at most N rows per partition
//     for ROW_NUMBER; for RANK, the rows whose rank is at most N (ties at
//     the N-th place are all kept); for DENSE_RANK, the rows of the first N
//     distinct sort keys. Rows only ever move down, so a row that falls
//     out never comes back.
//   - Rows that tie on every ORDER BY column keep their arrival order (a
//     later row ranks after), except with Config.LaterFirst, where a later
//     row ranks first: the keep-last deduplication.
//   - A row whose window has fired (window_end - 1 ms at or before the
//     watermark) is late: it is dropped and counted in Metrics.LateRows.
//   - Windows that fire on one watermark are emitted by end, then start;
//     the partitions of a window by encoded key; the rows of a partition in
//     rank order. Output is deterministic for a given input order.
//   - Output rows have no origin: they leave in another order than they
//     came.
//   - A Finish without a prior MaxWatermark fires every open window, unless
//     the job is being stopped (exec.Context.Stopping): then they stay in
//     the state.
//
// # Checkpoints
//
// The operator implements exec.Checkpointer. Checkpoint writes the
// partitions changed since the last one and deletes those of fired
// windows; Open restores them, so that a restored operator fires no
// window twice and drops the replays of rows the checkpoint holds (the
// store's Offsets). The meta record's watermark is the "fired up to"
// mark, as in exec/window: once the input ended, the last instant of the
// last window that fired.
//
// Store layout (every value starts with a version byte, 1):
//
//	m                                  meta: fingerprint, fired-up-to mark
//	p time(end) time(start) key        one partition of one window: the
//	                                   number of rows, then the rows
//	                                   (rowcodec), in rank order
//
// Times are 8-byte big-endian with the sign bit flipped, so that keys sort
// by time; key is the partition columns' types.AppendKey encoding.
package windowrank
