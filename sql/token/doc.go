// Package token defines the lexical tokens of Sluice's SQL dialect (Flink
// SQL), source positions, and positioned errors shared by the scanner, the
// parser and the planner.
//
// Invariants:
//   - A Pos is a byte offset plus one into a single source text; NoPos (0)
//     means "no position". Positions do not depend on a File value: any File
//     built from the same source maps a Pos to the same Position, so a later
//     stage may rebuild the File from the source text to render errors.
//   - Keywords are case-insensitive. Lookup maps a word to its keyword token
//     or to IDENT; the literal text of every token is kept by the scanner.
//   - Reserved keywords can never be bare identifiers; non-reserved keywords
//     can be used as identifiers wherever the grammar is unambiguous.
//   - Nothing in this package is mutable after package initialisation.
package token
