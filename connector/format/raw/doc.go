// Package raw implements the 'raw' format: the whole record is the value
// of the table's single STRING or BYTES column.
//
// Format options (as 'raw.<option>'): 'charset' (only 'UTF-8') and
// 'endianness' (accepted for Flink compatibility; it only matters for
// numeric columns, which this format does not support).
//
// A STRING keeps the record's bytes as they are, valid UTF-8 or not, and
// is written back unchanged, as in Flink; the json and csv formats write
// each byte that is not valid UTF-8 as U+FFFD.
//
// Invariants: a decoded value never aliases the input; encoding a row and
// decoding the result gives the same value; a NULL value encodes as an
// empty record.
package raw
