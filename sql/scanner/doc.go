// Package scanner turns SQL source text into tokens.
//
// Invariants:
//   - Scan never panics, whatever the input; malformed input yields ILLEGAL
//     tokens (or a best-effort token) and a call of the error handler.
//   - Every token is reported with the position of its first byte, and the
//     token sequence of a source ends with EOF, returned forever after.
//   - Literals are returned decoded: a STRING's lit is the text between the
//     quotes, a QIDENT's the name between the backquotes, each with its
//     doubled quote characters undoubled; a HEX's lit is the digits between
//     the quotes. Keywords and identifiers keep the text as written.
package scanner
