// Package window runs Flink's window table-valued functions on event time:
// TUMBLE, HOP, CUMULATE and SESSION, on their own (NewAssign) and fused with
// the window aggregation that groups by window_start and window_end
// (NewAggregate).
//
// Times are TIMESTAMP values, int64 microseconds since the epoch. A window
// [start, end) ends with the instant end - 1 ms, its window_time, as in
// Flink where windows are TIMESTAMP(3) values. A window fires when the
// watermark reaches that instant (wm >= end - 1 ms); MaxWatermark fires
// every window.
//
// Invariants:
//   - Window aggregates are incremental: a row updates one accumulator
//     group, that of its (slice, key) or (session, key); rows are never
//     buffered. HOP and CUMULATE windows are assembled from slices when
//     they fire.
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
//     every open window fires before Finish is forwarded.
//   - TIMESTAMP_LTZ time columns are windowed in UTC.
//   - Event times are microseconds but windows fire at end - 1 ms: a row in
//     the last millisecond of a window that comes after the watermark
//     reached end - 1 ms is late, although its time is after the
//     watermark. Millisecond event times (TIMESTAMP(3)) never see this.
package window
