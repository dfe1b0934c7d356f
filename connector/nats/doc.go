// Package nats is the 'nats' connector: a source that subscribes to core
// NATS subjects or reads a JetStream stream, and a sink that publishes to
// a subject, core or JetStream (nats.go is the client; its reconnection,
// with the table's back-off, is counted in the job's metrics).
//
// Invariants:
//   - A JetStream row's origin offset is its stream sequence, and a
//     reader's offsets rise: an ordered consumer delivers in stream
//     order by construction (and resumes after the checkpoint's offset,
//     connector.Resumer); a durable consumer's reader skips every
//     delivery at or below the highest sequence it holds, and reads from
//     the stream directly, in order, what the consumer delivered to an
//     earlier run or lost with a connection (a gap in its delivery
//     sequence), before anything newer. So the engine's offset
//     de-duplication makes either exactly-once in the job's state.
//   - A durable consumer's messages are acknowledged only once the job
//     has made their effect durable: in a job with checkpoints, when the
//     checkpoint whose barrier followed them completes
//     (connector.Acknowledger); without, at the next read. Skipped
//     deliveries and malformed messages are acknowledged likewise.
//   - The exactly-once JetStream sink publishes a row only after the
//     checkpoint holding it completed, with a message ID (nonce of the
//     sink's state, checkpoint number, index) that a restore from that
//     checkpoint reproduces: the stream's duplicate window drops the
//     republished copies.
//   - Core NATS keeps nothing: its source and sink are at-most-once, and
//     its rows' offsets are numbers that only rise across runs.
package nats
