// Package rowcodec is a compact, schema-directed binary encoding of rows:
// their changelog kind, their origin (source partition and offset) and their
// values. It is the wire format of rows that leave the process, such as the
// rows a shuffle writes to a queue topic.
//
// A Codec is built once from the column types. An Encoder appends many rows
// to one payload; a Decoder appends the rows of a payload to a types.Batch,
// a few at a time if asked, allocating nothing per value except the bytes of
// strings and the elements of nested values.
//
// Payload layout:
//
//	payload  = version:byte(1) columns:uvarint row*
//	row      = head:byte [origin] [nulls] [foreign] value*
//	head     = bits 0-1 row kind (+I -U +U -D)
//	           bits 2-3 origin mode: 0 explicit, 1 the previous row's
//	                    partition and offset+1, 2 the previous row's origin
//	           bit 4    a null bitmap follows
//	           bit 5    a foreign bitmap follows
//	           bits 6-7 zero
//	origin   = zigzag varint partition delta, zigzag varint offset delta,
//	           both from the previous row of the payload (the first row's
//	           from partition 0, offset 0)
//	nulls    = ceil(columns/8) bytes, bit i set: column i is NULL
//	foreign  = ceil(columns/8) bytes, bit i set: column i's value is of a
//	           kind other than the column's and is written as an any-value
//	value    = one per non-NULL column, by the column's kind:
//	           BOOLEAN                    1 byte, 0 or 1
//	           TINYINT..BIGINT, DATE,
//	           TIME, TIMESTAMP[_LTZ],
//	           INTERVAL                   zigzag varint
//	           FLOAT, DOUBLE              8 bytes, IEEE 754 bits, little endian
//	           DECIMAL                    tag 0: varint unscaled, column's scale
//	                                      tag 1: scale byte, varint unscaled
//	                                      tag 2|3: scale byte, uvarint n, n bytes
//	                                      of magnitude, big endian (3: negative)
//	           CHAR..VARBINARY            uvarint n, n bytes
//	           ARRAY, MULTISET, ROW       uvarint n, n any-values
//	           MAP                        uvarint n, n (any-value, any-value)
//	any-value = kind:byte, then the value as for a column of that kind
//	           (DECIMAL never uses tag 0); kind 0 is NULL, with nothing after
//
// Invariants:
//   - Decoding is lossless: a decoded row has the kind, origin and values of
//     the encoded one, each value with its own kind (a value whose kind
//     differs from its column's is written with its kind), a DECIMAL with
//     its scale, a FLOAT or DOUBLE with its exact bits.
//   - The decoder never panics and never allocates more than the input can
//     justify: any byte string either decodes or returns an error wrapping
//     ErrCorrupt, and a failed Decode call adds no rows to the batch.
//   - Row origins are delta-encoded within a payload, so consecutive rows of
//     one source partition cost no origin bytes at all.
package rowcodec
