// Package window runs Flink's window table-valued functions on event time:
// TUMBLE, HOP, CUMULATE and SESSION, on their own (NewAssign) and fused with
// the window aggregation that groups by window_start and window_end
// (NewAggregate). NewAggregate also aggregates rows that carry their
// window already (AggregateConfig.Attached: a cascaded window aggregation,
// over the rows of a window aggregation, Top-N or join): each row counts
// in the window its window_start and window_end columns give.
//
// Times are TIMESTAMP values, int64 microseconds since the epoch (for a
// TIMESTAMP_LTZ time attribute, wall-clock times in the session time zone:
// see Zone). A window
// [start, end) ends with the instant end - 1 ms, its window_time, as in
// Flink where windows are TIMESTAMP(3) values. A window fires when the
// watermark reaches that instant (wm >= end - 1 ms); MaxWatermark fires
// every window.
//
// Invariants:
//   - Window aggregates are incremental: a row updates one accumulator
//     group, that of its (slice, key), (session, key) or, for rows that
//     carry their window, (window, key); rows are never buffered. HOP and
//     CUMULATE windows are assembled from slices when they fire.
//   - A window's result is emitted once, as an insert, when it fires.
//     Windows that fire on one watermark are emitted by end, then start,
//     then encoded key, so output order is deterministic.
//   - Window aggregates take insert-only input; -U and -D rows fail the
//     operator.
//   - Late rows, whose every window already fired, are dropped and
//     counted in Metrics.LateRows. A row some of whose windows have not
//     fired yet counts in those (Flink's rule for HOP and CUMULATE). The
//     TVF alone drops nothing, except SESSION, which must buffer.
//   - Stateful operators drop a row whose origin offset is not above the
//     offset already folded in for its partition (a replay), counted in
//     Metrics.ReplayRows.
//   - Output rows of a window aggregate and of a SESSION assigner have no
//     origin: they are made of many input rows.
//   - A Finish without a prior MaxWatermark ends the input all the same:
//     every open window fires before Finish is forwarded; unless the job
//     is being stopped (exec.Context.Stopping), when open windows stay in
//     the state for the run that takes the partition over.
//   - TIMESTAMP_LTZ time columns (Spec.LTZ) are windowed in the session
//     time zone, as in Flink (see Zone): windows are cut in its wall-clock
//     time, window_start and window_end are wall-clock times, window_time
//     is a TIMESTAMP_LTZ instant, and a window fires when the watermark
//     (an instant) reaches the instant its last millisecond ends at. A
//     day-long window is a calendar day there, 23 or 25 hours long when
//     daylight saving time starts or ends. The state of such windows
//     holds wall-clock times: it belongs to the zone (the fingerprint
//     names it).
//   - Event times are microseconds but windows fire at end - 1 ms: a row in
//     the last millisecond of a window that comes after the watermark
//     reached end - 1 ms is late, although its time is after the
//     watermark. Millisecond event times (TIMESTAMP(3)) never see this.
//
// # Checkpoints
//
// Window aggregates and the SESSION assigner implement exec.Checkpointer;
// the TUMBLE, HOP and CUMULATE assigners keep no state. Open restores what
// the last checkpoint left in the operator's state.Store, so that a
// restarted operator goes on exactly where the checkpoint left it: it
// fires no window twice, treats no restored window as late, and drops the
// replays of rows the checkpoint holds (the store's Offsets table, which
// the store makes durable with the records).
//
// Invariants:
//   - Checkpoint writes only the records that changed since the last one
//     and deletes those of fired windows and merged sessions; then it
//     calls Store.Checkpoint. The per-row cost is a dirty flag: the first
//     change of an entry (session) in an interval lists it. A job that
//     never checkpoints lists nothing; a list that grows past twice the
//     live state (plus 4096) is dropped and the next checkpoint writes the
//     live state in full, which then costs no more than the list would.
//   - Checkpoints are taken between batches, never inside Process.
//   - State written for another window spec or other calls (a changed job)
//     is refused at Open.
//   - The meta record's watermark is the "fired up to" mark: every window
//     whose last instant is at or before it has fired. While the input
//     runs it is the watermark. Once the input ended (MaxWatermark or
//     Finish) every window has fired and the store keeps only the meta
//     record; its mark is then the last instant of the last window that
//     fired, not MaxWatermark, so that a job run again over a grown
//     bounded input drops the rows of the windows it emitted and
//     aggregates the later ones. (An empty window before that instant
//     counts as fired too: its rows are dropped.)
//
// Store layout. Keys start with one byte naming the record; times and
// counters are 8-byte big-endian (times with the sign bit flipped, so that
// keys sort by time); every value starts with a version byte (1).
//
//	m                        meta: fingerprint, fired-up-to mark, counter
//	s time(slice end) key    TUMBLE/HOP/CUMULATE: a slice's accumulators of
//	                         one grouping key (key as types.AppendKey)
//	w time(end) time(start) key
//	                         rows that carry their window: a window's
//	                         accumulators of one grouping key
//	c time(window start) key CUMULATE: a window's running accumulators
//	x id                     SESSION aggregate: one session: start, end,
//	                         partition key and its entries
//	r seq                    SESSION assigner: one buffered row: kind and
//	                         values
//
// An entry's value is its key values (agg.AppendStateValue) then each
// accumulator's AppendState, length-prefixed. The meta counter is the
// next session ID of a session aggregate, or the seq of the assigner's
// last buffered row. What is not stored is derived on restore: the open
// CUMULATE windows and the next one each fires come from the slices, the
// running accumulators and the watermark; the assigner's sessions come
// from re-adding its rows, since a partition's sessions are the unions of
// its rows' overlapping windows [t, t+gap] in any order.
package window
