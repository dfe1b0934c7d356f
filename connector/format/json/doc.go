// Package json implements the 'json' format: schema-directed decoding of
// JSON objects into typed rows and encoding of rows as Flink writes them.
//
// The decoder walks the record's bytes once with a small hand-written
// scanner and stores each field straight into its column, found by name;
// it never builds a generic tree or uses reflection. Unknown fields are
// skipped, missing fields are NULL (or an error with
// 'fail-on-missing-field'), numbers are parsed from their literal text
// into the column's type (DECIMAL exactly), and a JSON number, boolean,
// object or array read into a STRING column keeps its text.
//
// Format options (given to the table as 'json.<option>'):
//
//	fail-on-missing-field          error when a column has no field (false)
//	ignore-parse-errors            skip malformed records (false); applied
//	                               by the connector's error policy
//	timestamp-format.standard      'SQL' (default: "2020-04-15 08:05:00.5")
//	                               or 'ISO-8601' ("2020-04-15T08:05:00.5");
//	                               TIMESTAMP_LTZ values carry a 'Z' suffix
//	map-null-key.mode              what the encoder does with a NULL map
//	                               key: 'FAIL' (default), 'DROP', 'LITERAL'
//	map-null-key.literal           the key written in LITERAL mode ('null')
//	encode.decimal-as-plain-number write DECIMAL without exponent (false)
//	encode.ignore-null-fields      leave NULL fields out (false)
//
// Invariants: strings in decoded rows never alias the input buffer; the
// string columns and ROW fields of one record share a single string holding
// just their contents, so a record costs one allocation for all of them
// (strings inside arrays and maps are allocated one by one). The encoder
// writes fields in schema order and its output decodes back to the same
// row, except that a STRING holding bytes that are not valid UTF-8 (as
// the raw format may read them) is written with U+FFFD for each such
// byte: the output is always valid JSON, and it is what Flink writes (its
// Jackson serializer gets a Java String, decoded with that replacement).
//
// Formats built on this one (the changelog formats) parse their options
// with ParseOptions, walk their envelope with Members and Elements, and
// hand each row object's bytes to a Decoder and its rows to an Encoder.
package json
