package format

import "bytes"

// bom is the UTF-8 encoding of U+FEFF, the byte order mark.
var bom = []byte{0xef, 0xbb, 0xbf}

// TrimBOM returns data without a leading UTF-8 byte order mark, which
// some editors write at the start of a text file; Flink's readers (through
// Jackson) skip it too. Decoders of text formats call it on each record:
// the reader does not know where a file starts.
func TrimBOM(data []byte) []byte { return bytes.TrimPrefix(data, bom) }

// Blank reports whether data holds nothing but white space (and a byte
// order mark): a record of a line-oriented text format that gives no row.
func Blank(data []byte) bool {
	for _, c := range TrimBOM(data) {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != '\f' && c != '\v' {
			return false
		}
	}
	return true
}
