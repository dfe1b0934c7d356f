// Package ast declares the syntax tree of Sluice's SQL dialect (Flink SQL):
// statements, queries, table expressions, scalar expressions and types.
//
// Invariants:
//   - Every node has Pos and End: Pos is the position of its first
//     character and End the position just past its last one. Nodes built by
//     the parser always have valid positions; nodes built by hand may leave
//     them as token.NoPos.
//   - The tree says what was written, not what it means: names are not
//     resolved (ColumnRef{a, b} may be a column of table a or field b of
//     column a), number literals keep their text, and keywords are
//     canonicalised to upper case (operators, type names, time units, join
//     kinds). Identifiers keep their case and their quoting.
//   - Parentheses leave no node: (a + b) * c is Binary{*, Binary{+}, c}.
//     Format puts back the parentheses that precedence needs.
//   - Format prints a tree as canonical SQL which parses back to an equal
//     tree, positions aside.
//   - Optional parts are nil when absent; slices are nil when empty.
package ast
