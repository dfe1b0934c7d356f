// Package redis is the redis connector: dimension tables looked up by key
// (a connector.KeyLookuper) in a Redis server, and sinks that write them.
//
// A row's Redis key is 'key-prefix' followed by the values of the key
// columns joined by 'key-separator': the PRIMARY KEY columns, in their
// declared order, or without a primary key the lookup's key columns in
// table order. With 'data-type' = 'hash' (the default) HGETALL reads the
// row's columns from the fields of that name; with 'string' GET reads a
// value decoded with the table's 'format' (e.g. json), or, without a
// format, the value of the table's single non-key column. Key columns
// that the value does not carry are filled from the key. A key that does
// not exist has no rows.
//
// The sink (Sink) writes rows where a lookup of the same table reads
// them: by the PRIMARY KEY, which it needs; +I/+U rows HSET their
// columns (and HDEL the NULL ones) or SET the encoded value, -D rows DEL
// the key, 'sink.ttl' expires keys after their last write. Changes are
// buffered and reduced by key (connector/sinkbuf) and written in
// MULTI/EXEC batches; exactly-once by default in a job that takes
// checkpoints (written once the checkpoint that holds them is complete),
// else as the buffer fills ('sink.delivery-guarantee' = 'at-least-once').
//
// Invariants: a lookup by columns that do not cover the primary key is
// refused (Redis cannot search); other key columns are checked on the row
// read. Lookups go through a per-job lookupcache and are safe for
// concurrent use. Every command of the sink sets or deletes a whole key,
// so a batch written again leaves what one write would.
package redis
