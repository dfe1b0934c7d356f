// Package share reads an unbounded source once for all the jobs of an
// engine that read it: one reader per partition, one decode, each batch
// handed to every job attached.
//
// A Registry, owned by the engine, keeps one hub per shared source, keyed
// by what its readers produce: the table's name, the source's identity
// (connector.SourceIdentity), every option of the table (its format and
// decoding options too: they change the rows), its columns and keys, its
// partitions and, for a source that decodes (not a connector.Generator),
// the columns it decodes (connector.Table.Read). A job that reads other
// columns of a decoded table has a hub of its own: decoding more columns
// than it reads could fail, or skip, a record it would have taken.
//
// Registry.Wrap gives a job, for a table it scans, a Source that reads as
// the table's would: each partition it opens is a subscriber of the hub's
// partition, whose rows carry the same origins as the real reader's, so
// that the job's positions, checkpoints and exactly-once stay its own.
//
// Invariants:
//
//   - Per partition, one underlying connector.Reader, driven by one
//     goroutine, opened by the first subscriber and closed when the last
//     one leaves (or when it fails or ends, after the subscribers got the
//     error or the end).
//   - Lossless with back-pressure: a batch goes into every attached
//     subscriber's bounded queue, the reader waiting for room; so the hub
//     goes at the pace of the slowest job attached. A subscriber that
//     leaves (its job stopped, was cancelled or failed) no longer holds the
//     others back.
//   - A subscriber whose job waits for the next batch with nothing
//     queued may get it pushed (connector.Pusher): the hub's goroutine
//     runs the job's chain itself, under the subscriber's lock, which
//     the job takes before it goes on; so a push and the job's own run
//     never overlap, and a batch pushed comes before anything the job
//     handles after its wait (a barrier). A chain's error in a push
//     fails that job alone. The hub pushes only where PushFrom jobs or
//     more share the partition, and queues for a while after its pushes
//     fell behind the source (mostly full batches).
//   - Rows are shared, not copied: a subscriber hands the hub's rows (their
//     values alias the hub's batch) to its job, which must not change them
//     (exec.Operator.Process says no operator does). A batch's memory is
//     reused only once every subscriber it went to has released it: when
//     it asks for more rows after handing out the batch's last ones, or
//     closes.
//   - A job reads each partition from where it would start alone: the
//     table's startup position, or after the offset it resumes from. It
//     attaches to the hub at once when the hub is there (it has handed
//     out the rows up to that offset and none past it, in the same epoch
//     of the log; or, afresh, none since it opened at the startup
//     position). Otherwise the job reads the partition with a reader of
//     its own until the hub's last row is among those it has just read,
//     and then attaches there, the hub's rows up to its last one dropped
//     for it: it never misses a row, nor gets one twice. A generator's rows have no history: a job
//     starting afresh attaches to its hub at the hub's position.
//   - Only unbounded sources whose partitions are fixed are shared: a
//     bounded one (a file) gives every job its whole input; a source whose
//     partitions are named (a directory), bounded in how many are open
//     at once, or positioned by the reader (a shuffle) is read per job.
package share
