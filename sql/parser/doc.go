// Package parser turns SQL source text (Flink SQL dialect) into syntax trees
// of package ast. It is a hand-written recursive-descent parser over the
// tokens of package scanner.
//
// Invariants:
//   - The parser never panics on any input and never loops: every loop
//     consumes a token or stops, and nesting deeper than maxDepth is an error.
//   - Errors are token.Errors with positions; a parse returns at most
//     maxErrors of them, sorted, with at most one per source line. After an
//     error in a statement the parser skips to the next ';' and goes on, so
//     one call reports the errors of several statements.
//   - Keywords are canonicalised to upper case in the tree; identifiers keep
//     their spelling and quoting.
//   - Printing a parsed tree with ast.Format and parsing the text again gives
//     an equal tree, positions aside.
package parser
