// Package builtin lists the connectors and formats that ship with Sluice,
// for the engine to register into its own registries.
//
// Invariants: the package holds no state and has no init side effects;
// each call returns fresh factory values, so two engines in one process
// never share a registry.
package builtin
