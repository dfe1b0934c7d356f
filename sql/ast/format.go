package ast

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sluicesql/sluice/sql/token"
)

// formatIdent returns the identifier as SQL: bare when it was written bare
// and can be read back bare, in backquotes otherwise.
func formatIdent(x *Ident) string {
	if !x.Quoted && isBareIdent(x.Name) {
		return x.Name
	}
	return "`" + strings.ReplaceAll(x.Name, "`", "``") + "`"
}

// isBareIdent reports whether name scans as one identifier token that is
// not a reserved keyword.
func isBareIdent(name string) bool {
	if name == "" {
		return false
	}
	for i, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r == '_':
		case r >= '0' && r <= '9', r == '$':
			if i == 0 {
				return false
			}
		case r >= utf8.RuneSelf && unicode.IsLetter(r):
		case r >= utf8.RuneSelf && unicode.IsDigit(r) && i > 0:
		default:
			return false
		}
	}
	return !token.IsReservedWord(name)
}
