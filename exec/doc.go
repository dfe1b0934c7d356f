// Package exec runs physical plans: operators that push batches of typed rows
// to the next operator, watermarks that flow with them, and the exchanges that
// split a stage over parallel workers.
//
// Invariants:
//   - An operator is driven by one goroutine at a time. Process, Watermark
//     and Finish of one operator are never called concurrently.
//   - A batch passed to Process belongs to the caller and is read-only: an
//     operator must copy what it keeps (types.CopyRow), must not retain the
//     batch, and must not change it (its rows, their values, its slice of
//     rows): the branches of a shared source (Stage.Trunk) get one batch.
//   - Watermarks are event-time instants in microseconds since the epoch;
//     they never decrease along one edge. MaxWatermark means end of input.
//   - Finish is called once, after the last Process/Watermark, and is
//     forwarded downstream; Close releases resources and is always called.
//   - Back-pressure is lossless: a full channel blocks the sender; nothing is
//     ever dropped because a buffer is full.
package exec
