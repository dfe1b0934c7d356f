// Package rocketmq is the 'rocketmq' connector: a source and a sink of a
// RocketMQ 5 topic through a proxy's gRPC endpoint, on the official v5
// Go client (github.com/apache/rocketmq-clients/golang/v5).
//
// The source has two modes ('scan.mode'):
//   - receive: a simple consumer of the table's consumer group, one
//     partition (receive.go). Invariants: a message is acknowledged only
//     once the job has made its effect durable (in a job with
//     checkpoints, when the checkpoint whose barrier followed it
//     completed; without, at the next read); until then its invisible
//     time is renewed, so that the proxy does not deliver it again while
//     the job holds it. One goroutine (the keeper) makes every call that
//     uses a message's receipt handle once received. What is not
//     acknowledged when a run ends comes again (at-least-once).
//   - offsets: each message queue is a partition, read with PullMessage
//     from a queue offset (offsets.go; the client has no pull consumer,
//     so the calls are package rmqwire's); a row's origin offset is its
//     queue offset, strictly rising in a partition, and a reader opened
//     after an offset reads from the next one, so that the job's offset
//     dedup makes its state exactly-once.
//
// The sink sends normal messages, awaiting every send at Flush
// (at-least-once), or transactional ones (TxnSink, txn.go): half
// messages sent as rows are written, committed once the checkpoint that
// covers them completed; a restarted sink commits what its restored
// checkpoint covers and answers the proxy's transaction checks from the
// runs its checkpoints record (with a telemetry stream of its own,
// checker.go: the client's own checker races with its GracefulStop), so
// that nothing is lost or doubled.
//
// The v5 client keeps process-wide loggers: rmqwire.QuietClient, called
// before any client is made, turns its per-call log off and sends its
// warnings to standard error.
package rocketmq
