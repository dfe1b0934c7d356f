// Package blackhole implements the 'blackhole' connector: a sink that
// swallows every row, for benchmarks and for jobs run for their side
// effects.
//
// Invariants: a sink never fails and never retains a batch; it only counts
// the rows it is given.
package blackhole
