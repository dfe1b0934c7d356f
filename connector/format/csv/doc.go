// Package csv implements the 'csv' format: one record per line, columns by
// position, with Flink's options.
//
// Format options (given to the table as 'csv.<option>'):
//
//	field-delimiter          one character (default ','); "\t" is a tab
//	quote-character          one character (default '"')
//	disable-quote-character  no quoting at all (false)
//	allow-comments           lines starting with '#' are skipped (false)
//	ignore-parse-errors      skip malformed records (false); applied by the
//	                         connector's error policy
//	array-element-delimiter  separates ARRAY elements and ROW fields
//	                         inside one column (default ';')
//	escape-character         one character that makes the next one literal
//	                         (none by default)
//	null-literal             unquoted text read as NULL and written for
//	                         NULL (none by default: NULL is written as an
//	                         empty field)
//	write-bigdecimal-in-scientific-notation
//	                         write tiny DECIMALs as Java's BigDecimal
//	                         .toString does, e.g. 1E-9 (true)
//
// Reading: a quoted field may contain delimiters, doubled quotes and line
// breaks; an empty field is NULL for every type but STRING/CHAR (which read
// ""); fields beyond the schema are ignored and too few fields are an
// error. Values are parsed from their text: numbers (DECIMAL exactly),
// booleans, DATE "2020-04-15", TIME "08:05:00", TIMESTAMP in the SQL or the
// ISO-8601 form, TIMESTAMP_LTZ likewise with a zone, BYTES in base64. MAP
// and MULTISET columns are not supported.
//
// Invariants: strings in decoded rows never alias the input buffer; the
// strings of one record share a single copy of it. What the encoder writes
// decodes back to the same row, except that a NULL string without a
// null-literal reads back as "", and that each byte of a STRING that is not
// valid UTF-8 (as the raw format may read it) is written as U+FFFD, as
// Flink's csv format writes it (through a Java String).
package csv
