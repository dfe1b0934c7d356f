package parser

import (
	"github.com/sluicesql/sluice/sql/scanner"
	"github.com/sluicesql/sluice/sql/token"
)

// CompleteStatements returns the length of the longest prefix of src that
// ends a statement: the offset just after the last ';' that closes one,
// found with the scanner, so that a ';' in a string, a quoted identifier
// or a comment, or between the BEGIN and the END of a statement set, ends
// nothing. It is 0 while src holds no complete statement. A terminal
// reading statements line by line runs src[:n] once n > 0 and keeps the
// rest.
func CompleteStatements(src []byte) int {
	var s scanner.Scanner
	s.Init(token.NewFile("", src), nil, 0)
	end, blocks, cases := 0, 0, 0
	for {
		pos, tok, _ := s.Scan()
		switch tok {
		case token.EOF:
			return end
		case token.BEGIN:
			blocks++
		case token.CASE:
			cases++
		case token.END:
			// END closes a CASE first: CASE ... END nests inside a
			// statement set, never the other way round.
			if cases > 0 {
				cases--
			} else if blocks > 0 {
				blocks--
			}
		case token.SEMICOLON:
			if blocks == 0 {
				end, cases = pos.Offset()+1, 0
			}
		}
	}
}
