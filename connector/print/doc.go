// Package print implements the 'print' connector: a sink that writes each
// row as a line of text, the way Flink's print connector does:
//
//	+I[1, abc, 2020-04-15 08:05:00.000]
//	id> -U[2, null, 1.50]
//
// The line starts with the row's changelog kind; values are printed as
// types.AppendValue prints them, a NULL column as "null" (as Flink's
// Row.toString does). Options: 'print-identifier' (a prefix "id> ") and
// 'standard-error' (write to standard error instead of Env.Stdout).
// 'sink.parallelism' is accepted and ignored.
//
// Invariants: each batch is written with a single Write call, so lines of
// sinks sharing a writer never interleave within a line.
package print
