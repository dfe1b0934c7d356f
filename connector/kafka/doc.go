// Package kafka implements the 'kafka' and 'upsert-kafka' connectors over
// any Kafka-protocol cluster, with Flink's option names.
//
// # kafka
//
// Table options:
//
//	'topic'                           a topic, or several separated by ';'
//	'topic-pattern'                   a regular expression matching whole
//	                                  topic names (source only)
//	'properties.bootstrap.servers'    host:port,... (required)
//	'properties.group.id'             the consumer group whose committed
//	                                  offsets 'group-offsets' reads
//	'properties.*'                    client properties; see below
//	'format' or 'value.format'        the value's format (required)
//	'key.format', 'key.fields'        the key's format and columns ('a;b')
//	'key.fields-prefix'               prefix of the key columns' names that
//	                                  the key's format does not see
//	'value.fields-include'            ALL (default) or EXCEPT_KEY
//	'scan.startup.mode'               earliest-offset, latest-offset,
//	                                  group-offsets, timestamp or
//	                                  specific-offsets (with
//	                                  'scan.startup.timestamp-millis' or
//	                                  'scan.startup.specific-offsets' =
//	                                  'partition:0,offset:42;partition:1,offset:300')
//	'scan.bounded.mode'               unbounded (default), latest-offset,
//	                                  group-offsets, timestamp or
//	                                  specific-offsets (with the matching
//	                                  'scan.bounded.*' option)
//	'sink.partitioner'                default (by key hash; sticky without a
//	                                  key), fixed (all to partition 0: a
//	                                  sink has one writer) or round-robin
//	'sink.delivery-guarantee'         none, at-least-once (default) or
//	                                  exactly-once (needs
//	                                  'sink.transactional-id-prefix')
//	'sink.transaction.interval'       (Sluice) how long an exactly-once
//	                                  transaction stays open at most;
//	                                  default 1 s
//	'dead-letter.path'                (Sluice) file for malformed records;
//	                                  see connector.ErrorPolicy
//
// Format options are '<format>.<option>' with 'format',
// 'value.<format>.<option>' with 'value.format' and
// 'key.<format>.<option>' for the key. Malformed records follow the
// table's error policy, built from the value format's ignore-parse-errors
// option; a key that cannot be decoded counts as a malformed record too.
//
// Accepted for Flink compatibility and ignored: 'sink.parallelism',
// 'scan.parallelism' and 'scan.topic-partition-discovery.interval' (the
// partitions are listed once, when the job starts). 'sink.semantic' is
// the older name of 'sink.delivery-guarantee'.
//
// # upsert-kafka
//
// The table needs a PRIMARY KEY; the key columns are the record key, in
// 'key.format' (required), and the value is in 'value.format'. It takes
// 'topic', 'properties.*', 'key.fields-prefix', 'value.fields-include',
// 'scan.bounded.*', the 'sink.delivery-guarantee' options and
// 'sink.buffer-flush.interval' (the producer's linger;
// 'sink.buffer-flush.max-rows' is accepted and ignored).
//
// The source reads the whole topic from the earliest offset as a
// changelog: a record for a key not seen before is +I, a record for a key
// seen before is +U, and a tombstone (a record without a value) is -D for
// a known key and dropped for an unknown one. To tell these apart each
// reader keeps the set of live keys of its partition: memory grows with
// the number of distinct live keys (the key bytes plus about 50 bytes of
// map overhead each). Records without a key are malformed.
//
// The sink writes +I and +U rows as records keyed by the primary key, -D
// rows as tombstones, and skips -U rows (the +U that follows replaces the
// key's value). With the default partitioner a key always goes to the
// same partition, which the source relies on.
//
// # Partitions, offsets and ends
//
// A source has one partition per Kafka partition of its topics, listed
// when the source is created (topics in the order named, or by name for a
// pattern; partitions in order), and each reader consumes its partition
// directly: no consumer group takes part yet. A row's Origin.Part is the
// connector partition (for a single topic, the Kafka partition number)
// and Origin.Offset the record's offset (in a later epoch, see below, plus
// the epoch's base).
//
// Open resolves the start offset, and for a bounded source the end offset,
// with the admin API; both are fixed from then on. A bounded reader
// returns io.EOF once it has passed the end offset: records at or after
// it are never returned. Transaction markers are fetched (and skipped) so
// that a reader always sees the last offset before the end. Partitions
// that specific offsets leave out start at the group's committed offset
// when 'properties.group.id' is set, otherwise at the earliest offset, and
// end at the latest offset.
//
// 'group-offsets' starts at the group's committed offset; a partition
// without one starts as 'properties.auto.offset.reset' says: earliest
// (default; Flink's default 'none' would fail), latest or none (fail).
// Without 'scan.startup.mode' a table with 'properties.group.id' starts at
// the group offsets, one without at the earliest offset.
//
// 'scan.startup.timestamp-millis' and 'scan.bounded.timestamp-millis' must
// lie between 0 and 9999-12-31 23:59:59.999 (Kafka would read -1 as
// "latest" and -2 as "earliest"); specific offsets may name a partition
// once, and only one the topic has.
//
// # Resuming where the log has changed
//
// A job restarted from a checkpoint resumes each partition after the
// checkpoint's offset. When that offset is no longer in the log, beyond
// its end (the topic was deleted and recreated, or truncated) or before
// its start (retention deleted records the job never read), the partition
// resets as Flink's KafkaSource does, through the consumer's
// auto.offset.reset that it sets from the startup mode: to the earliest
// offset for 'earliest-offset', 'specific-offsets' and upsert-kafka, to
// the latest for 'latest-offset' and 'timestamp', and as
// 'properties.auto.offset.reset' says for 'group-offsets' ('none' fails
// the job with a message that says what happened). The job's log says
// where reading goes on. A topic deleted and recreated while a partition
// is read is noticed by its new ID and read the same way (a deleted topic
// that stays away is reported once, and waited for); so is an offset the
// broker reports out of range.
//
// What the job computed from the old log stays in its state. Its
// stateful operators drop rows whose origin offset is not above the last
// they folded in, so a partition that goes on at a lower offset enters a
// new epoch: its rows' origins are the Kafka offsets plus epoch<<56 (for
// changelog formats, record offsets plus epoch<<44, which leaves them 44
// bits), above every earlier origin; checkpoints carry the epoch. A log
// can be replaced 127 times under one job's state (7 for changelog
// formats). A topic recreated with at least as many records as the
// checkpoint's offset is not noticed at a restart: its log is read on from
// that offset. As in Flink, the position moves with the records read, so
// a run that resets and reads nothing resets again the next time.
//
// Readers fetch with 'properties.isolation.level' = 'read_committed' unless
// told otherwise (Kafka's own default is read_uncommitted): records of
// open or aborted transactions are not read, and 'latest-offset' means the
// last stable offset.
//
// A tombstone read by a 'kafka' (not upsert) table is skipped, as Flink
// does.
//
// # Changelog formats
//
// A 'kafka' table whose value format is a changelog format
// (debezium-json, canal-json, maxwell-json) is read as a changelog: a
// record gives any number of rows of any kind, each row's Origin.Offset
// numbering the rows of its record (connector.ChangelogOffset), and every
// row of a record gets the record's key columns and metadata. OpenAfter
// reads the record of a partly covered position again and skips its rows
// up to the position; ResumeOffset gives the Kafka offset a consumer
// group commits. Its sink writes every kind through the format (-U as a
// deletion, as Flink does), with a PRIMARY KEY or without. upsert-kafka refuses
// changelog formats, and a key format cannot be one.
//
// # Sinks
//
// A sink writes one topic, which must exist: sinks do not create topics.
// It has one writer. Unless the value format is a changelog format, rows
// must be +I or +U (a -U or -D row fails the write; use upsert-kafka or a
// changelog format for updating queries). Records are produced
// asynchronously; Flush returns once every record written so far is
// acknowledged.
//
// With 'exactly-once', records are written in Kafka transactions under the
// transactional id '<prefix>-0', which must be unique to the sink (a second
// writer with the same id fences the first). The transaction commits on
// Flush, on Close and once it has been open for
// 'sink.transaction.interval'; read-committed consumers see the records
// only then. A write error poisons the open transaction: Close aborts it,
// so that none of its records become visible. A later change ties the
// commits to the checkpoints of the job's state, so that output, state
// and input offsets commit together.
//
// # Brokers that cannot be reached
//
// A broker that a table's clients cannot connect to is reported in the
// job's log at once, with its address and the reason, and again when it
// is back (internal/brokerwatch); the clients keep trying. A job that
// starts while its brokers are down waits for them up to
// 'properties.default.api.timeout.ms' (60 s, Kafka's default, as Flink's
// clients do), then fails with an error naming the addresses. Readers
// retry for as long as the job runs; a sink's records wait for
// 'properties.delivery.timeout.ms' if set, and its errors name the
// brokers.
//
// # Metadata columns
//
// Both connectors provide these METADATA keys to sources: 'topic'
// (STRING), 'partition' (INT or BIGINT), 'offset' (BIGINT), 'timestamp'
// (TIMESTAMP_LTZ(3) or TIMESTAMP(3)), 'timestamp-type' (STRING:
// NoTimestampType, CreateTime or LogAppendTime), 'headers' (MAP<STRING,
// BYTES>; of repeated header keys the last wins) and 'leader-epoch' (INT,
// NULL when unknown). A column of another type is refused, naming it.
//
// # Client properties
//
// 'properties.*' options that the client understands are translated:
// client.id, isolation.level, auto.offset.reset, fetch.max.wait.ms,
// fetch.min.bytes, fetch.max.bytes, max.partition.fetch.bytes, linger.ms,
// batch.size, compression.type, acks, enable.idempotence,
// transaction.timeout.ms, request.timeout.ms, delivery.timeout.ms,
// default.api.timeout.ms (see below),
// socket.connection.setup.timeout.ms, metadata.max.age.ms and
// security.protocol (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL with
// sasl.mechanism PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 and the username and
// password of sasl.jaas.config) with the ssl.* properties of TLS: PEM
// trust and key stores, from files or inline (see package
// internal/kafkasecurity, which the engine's own Kafka clients share).
// Others are accepted and ignored, as Flink passes them to its client
// unchecked; but an ssl.* property that Kafka's clients do not know, or
// that Sluice cannot honour (JKS and PKCS12 stores, ssl.key.password), is
// an error.
package kafka
