// Package countchar holds the count_char example: Nexmark q14's user
// function, which counts the occurrences of a character in a string,
// written in the WebAssembly text format (count_char.wat) and assembled
// into count_char.wasm by `go generate`. See docs/functions.md.
package countchar

//go:generate go run ../../internal/wat/wat2wasm -o ../../testdata/e2e/nexmark-q14-wasm/count_char.wasm count_char.wat
