// Package agg holds Sluice's aggregate functions: their type rules (Flink's),
// their accumulators (one file per function), the DISTINCT wrapper, the
// Registry through which the planner finds them, and the UserAggregate
// adapter for aggregates written in Go.
//
// Invariants:
//   - Accumulators follow SQL's NULL rules: rows with a NULL argument are
//     skipped (COUNT(*) counts every row); a function over no non-NULL
//     value yields NULL, except COUNT and SUM0 (0), COLLECT (an empty
//     multiset).
//   - Every accumulator of a built-in made for a Call with AppendOnly unset
//     supports Retract and Merge: after Add(x) then Retract(x) the result
//     is the one before the Add (exactly, but for floating-point rounding in
//     DOUBLE sums and the variance family). A user aggregate (in Go, or a
//     WebAssembly module without the exports) may lack them: its Retract
//     and Merge then return an error that says so. Counts may go negative when a
//     retraction overtakes its accumulation; a later Add cancels it.
//   - Order-sensitive functions (FIRST_VALUE, LAST_VALUE, LISTAGG, COLLECT)
//     keep arrival order; a retraction removes the earliest equal value,
//     and Merge appends the other accumulator's values after this one's.
//   - A Call with AppendOnly set may get a cheaper accumulator (MIN, MAX,
//     FIRST_VALUE, LAST_VALUE, LISTAGG keep no history) whose Retract
//     returns an error. Merge works in both modes.
//   - Result returns a value that does not alias state the accumulator
//     mutates later, so a caller may keep it as the "last emitted" result.
//   - Add on COUNT, SUM and AVG over integers and int64-sized DECIMALs, and
//     on append-only MIN and MAX, does not allocate.
//   - AppendState and LoadState round-trip: an accumulator loaded from the
//     state of another behaves as that one did, arrival order included.
//   - Nothing here is process-wide: a Registry is a value, built by
//     NewRegistry with the built-ins. A function that holds state one
//     goroutine at a time may use (an Instantiator: a WebAssembly module's
//     instance) is given a copy of its own by Bind for each operator
//     instance; its results may fail (FallibleResult), which
//     Group.Results reports.
package agg
