// Package rocketmqfake is an in-process stand-in for a RocketMQ 5 proxy:
// a gRPC server of the v2 MessagingService (apache/rocketmq-apis) that
// the official v5 clients talk to, with in-memory topics, for tests and
// for `sluice dev rocketmq`.
//
// What it models:
//   - QueryRoute: a topic has a number of message queues (4 unless
//     created otherwise), all of one broker whose endpoints are those the
//     client asked with; unknown topics are created on first use unless
//     Options.NoAutoCreate, then NOT_FOUND.
//   - The telemetry stream: a client's settings (its type, the topics it
//     publishes, its consumer group and long-polling timeout) are kept
//     and answered with the server's (maximum body size, back-off), and
//     the stream carries the transaction checks; Heartbeat and
//     NotifyClientTermination.
//   - SendMessage: a normal, FIFO or delay message is appended to a queue
//     (round-robin; by the hash of its message group for FIFO) at the next
//     offset, with its store time; a delay message is visible at once.
//   - Transactional messages: a half message is kept aside, invisible,
//     until EndTransaction commits it (it is then appended to a queue, so
//     its offset is that of its commit) or rolls it back. A half message
//     unresolved for its orphan threshold (the message's own, else
//     Options.TransactionCheckAfter) is checked: a
//     RecoverOrphanedTransactionCommand goes over the telemetry stream of
//     a producer that publishes its topic (round-robin among them, as the
//     proxy picks any producer of the topic), every
//     Options.TransactionCheckInterval, until it is resolved; after
//     Options.TransactionCheckMax checks that reached a producer it is
//     rolled back, as a broker discards it.
//   - ReceiveMessage (a simple consumer's POP): per consumer group, each
//     queue is read in offset order; a message delivered is invisible to
//     the group for the request's invisible duration, then delivered
//     again with its delivery attempt counted up, unless acknowledged
//     (AckMessage) first. ChangeInvisibleDuration resets the time and
//     hands out a new receipt handle; an old receipt handle is refused.
//     After Options.MaxDeliveryAttempts deliveries a message goes to the
//     group's dead-letter topic (%DLQ%group). A request waits up to the
//     client's long-polling timeout (bounded by its deadline) for
//     messages; none: MESSAGE_NOT_FOUND.
//   - PullMessage and QueryOffset (package rmqwire): a queue read from an
//     offset, and the offsets of its start, its end or a time.
//   - Tag filters ('*', 'a || b'); namespaces (a resource's namespace
//     and name together name it); access-key authentication with the
//     HMAC-SHA1 signature of the v5 clients when Options.Credentials is
//     set (UNAUTHORIZED otherwise).
//   - TLS: like a proxy's gRPC port, it serves TLS only (a self-signed
//     certificate made at start), which is what the v5 Go client speaks.
//
// What it does not model: more than one broker, replicas and their
// persistence, a name server, retention (nothing is ever deleted),
// SQL92 filters (refused with ILLEGAL_FILTER_EXPRESSION), message type
// checks of topics (every topic takes every type), delivery times of
// delay messages, FIFO consumption order across redeliveries and the
// retry topic's back-off (a redelivered message comes again as soon as
// its invisible time ends), consumer-group offsets (UpdateOffset,
// GetOffset), push consumers' assignments beyond "every queue", quotas
// and throttling, message tracing and metrics, ACLs beyond one secret
// per access key, and the server's back-off and metric settings (the
// settings answer leaves them out: the v5 Go client applies them
// without the locks its readers take). The data lives in memory only.
package rocketmqfake
