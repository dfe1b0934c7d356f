package types

import "unicode/utf8"

// AppendValidUTF8 appends s with every byte that is not part of a valid
// UTF-8 sequence replaced by U+FFFD. STRING values keep the bytes a source
// gave them (as Flink's StringData does); text formats write them as
// Flink's do, through a Java String whose UTF-8 decoder makes the same
// replacement, so that their output is always valid UTF-8.
func AppendValidUTF8(dst []byte, s string) []byte {
	if utf8.ValidString(s) {
		return append(dst, s...)
	}
	start := 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\uFFFD"...)
			i++
			start = i
			continue
		}
		i += size
	}
	return append(dst, s[start:]...)
}
