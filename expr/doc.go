// Package expr holds bound, typed expression trees, their compilation into
// closures, and the table of built-in functions.
//
// The planner's binder resolves names and calls a Builder, which checks
// argument types against Flink's rules, inserts implicit casts and computes
// result types; Compile turns a tree into an Eval closure, CompilePredicate
// into a filter. A Registry holds the built-ins and user-defined scalar and
// table functions; an engine owns one (there is no global function table).
//
// Invariants:
//   - A Node's Type never changes; rewrites (Fold, MapColumns) build new
//     nodes and share unchanged ones.
//   - Every Call is bound: its Fn is set and its Args already carry the
//     implicit casts its function needs.
//   - NULL propagates through functions unless documented otherwise; logic
//     is three-valued (AND, OR, NOT, IN, comparisons).
//   - Constant sub-expressions are folded at Compile time, so constant
//     regular expressions, LIKE patterns, date formats and IN lists are
//     prepared once and never per row. Non-deterministic functions (RAND,
//     NOW, CURRENT_TIMESTAMP, PROCTIME, UUID) are never folded.
//   - A deterministic sub-expression that occurs more than once among
//     expressions compiled together (one expression, or a Program: a
//     Calc's filter and projections) is evaluated at most once per row,
//     lazily where it is first reached, so CASE, AND and OR still skip
//     what they skip (cse.go). Non-deterministic calls are never shared.
//   - An Eval is not safe for concurrent use (it may hold scratch buffers,
//     pattern caches and random generators); compile one per worker.
//     Arithmetic, comparisons and logic over numbers, and column and literal
//     access, allocate nothing per row.
//   - A PatternSet (patternset.go) answers many constant string patterns
//     (LIKE, SIMILAR TO, REGEXP, POSITION) of one value in one pass, each
//     exactly as its own compiled predicate would; it is immutable and
//     safe for concurrent use.
//   - Runtime failures (integer division by zero, a failed CAST, an invalid
//     argument) are returned as errors from Eval, naming the expression;
//     user input never panics.
//
// Known differences from Flink are documented where they occur: integer
// CAST overflow is an error rather than a silent wrap (types.CastIn);
// regular expressions use RE2 syntax (see like.go); UNIX_TIMESTAMP of an
// unparsable string is NULL.
package expr
