// Package rabbitmq is the 'rabbitmq' connector: a source that consumes a
// queue and a sink that publishes to an exchange, over AMQP 0-9-1 (the
// client of github.com/rabbitmq/amqp091-go; connecting again, the
// acknowledgements and the publisher confirms are this package's).
//
// Invariants:
//   - The source acknowledges a delivery only once the job has made its
//     effect durable: in a job with checkpoints, when the checkpoint whose
//     barrier followed it completes; without, at the next read.
//     Acknowledgements go in the order the deliveries came, as one
//     basic.ack with multiple set for a run of them, and only on the
//     channel that delivered them: delivery tags belong to a channel, and
//     what a channel that closed delivered the broker delivers again (a
//     delivery of it that the job has not yet read is dropped, so that it
//     is not read twice). At-least-once.
//   - The sink publishes in the order written, on one channel in confirm
//     mode, and keeps every message until the broker confirms it; Flush
//     (every checkpoint, and the end) returns once all are confirmed. A
//     nack or a returned (unroutable, with 'sink.mandatory') message fails
//     the job; a lost connection is made again with back-off and what it
//     did not confirm published again, in order. At-least-once.
//   - Errors name the broker by its URI without the password.
//   - Every query parameter of the URI is read as RabbitMQ defines it
//     (heartbeat, connection_timeout, channel_max, frame_max,
//     auth_mechanism) or refused with an error naming it: the TLS ones
//     with the tls.* option to use instead, an unknown one with the
//     nearest known name. None is ignored.
package rabbitmq
