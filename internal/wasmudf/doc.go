// Package wasmudf runs user functions compiled to WebAssembly: the
// functions that CREATE FUNCTION name(arg TYPE, ...) RETURNS ... AS
// 'export' LANGUAGE WASM USING JAR 'file.wasm' creates. They are scalar,
// table or aggregate functions, by what the module exports; the ABI is
// documented in docs/functions.md.
//
// The runtime is wazero: pure Go, so the binary stays static and needs
// no C toolchain, and it compiles modules to machine code ahead of the
// first call.
//
// Invariants:
//   - A module is compiled once per Host (per engine) for each memory
//     limit and timeout setting, and instantiated once per compiled call
//     (per operator instance), never per row. An instance is used by one
//     goroutine at a time; an unbound aggregate's shared instance is used
//     under a lock.
//   - Instances are closed when the collector finds them unreferenced (a
//     cleanup closes the module) and all at once by Host.Close: their
//     resources are memory only.
//   - Arguments and accumulators cross through one block of guest memory
//     per instance that the host obtained from the module's sluice_alloc
//     and owns from then on; a call allocates nothing on the host in the
//     steady state but the values it returns.
//   - Modules see no files, no network, no environment and a fake clock:
//     WASI preview 1 is provided without any of them.
//   - A trap, an overrun of wasm.call-timeout or a misuse of a host
//     function fails the call with an error naming the function; the
//     module is not trusted to report it.
package wasmudf

//go:generate go run ../wat/wat2wasm testdata/udfs.wat
