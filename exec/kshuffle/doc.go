// Package kshuffle carries a stage boundary of a job through a Kafka topic:
// the queue-backed twin of exec.HashExchange and exec.Inbox, for when the
// next stage runs in another process.
//
// A Writer is the exec.Output of an upstream task. It routes every row to a
// partition of the shuffle topic by exec.KeyHash of its key columns (the
// routing of exec.HashExchange), merges the rows bound for one partition
// into one payload (types/rowcodec), compresses it and produces it as one
// Kafka record. Watermarks, idleness and the end of input travel as small
// control records, written to every partition and naming their writer.
//
// A Source reads the topic partition by partition: each of its readers
// decodes data records back into rows, with their original origins, and
// folds the control records of all writers into one watermark, exactly as
// exec.Inbox does for in-process senders. It exposes them through the
// optional WatermarkReader interface; the partition ends (io.EOF) once every
// writer's end-of-input marker was read.
//
// Record layout. A data record has no headers; its value is one codec byte
// (see Compression) followed by the rowcodec payload, compressed by that
// codec (an LZ4 block is preceded by its uvarint decompressed size). A
// control record has an empty value and one header, ControlHeader, whose
// value is: kind byte (watermark, idle, active, end), uvarint writer id,
// uvarint number of writers, zigzag varint watermark.
//
// Invariants:
//   - All rows of one key go to the same partition, whatever writer sent
//     them, and each row keeps its Origin, so that stateful operators drop
//     replays across the stage boundary as they do within a process.
//   - Within a partition, a writer's control record follows every data
//     record it sent before it: a writer flushes its buffered rows before
//     it writes a watermark, an idleness change or its end of input. Kafka
//     keeps the order (the client produces idempotently, per partition in
//     order).
//   - A reader's watermark is the minimum over the writers that are neither
//     idle nor finished; it never decreases, also when a restarted writer
//     sends an older watermark again. A reader stops a Read at a control
//     record that changes it, so rows and watermarks reach the task in the
//     order they were written.
//   - Nothing is dropped when a buffer fills: a full producer buffer blocks
//     the writing task.
package kshuffle
