// Command wat2wasm assembles WebAssembly text files (the subset package wat
// reads) into binary modules: each NAME.wat argument becomes NAME.wasm
// beside it, and is also copied to every -o path given. `go generate` runs it over the modules under testdata and
// examples; the output depends only on the input, so a regenerated tree is
// byte for byte the committed one.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/sluicesql/sluice/internal/wat"
)

// copies are the -o paths.
type copies []string

func (c *copies) String() string     { return strings.Join(*c, ",") }
func (c *copies) Set(s string) error { *c = append(*c, s); return nil }

func main() {
	var also copies
	flag.Var(&also, "o", "also write the module to this `path` (repeatable; with one input)")
	flag.Parse()
	if flag.NArg() < 1 || len(also) > 0 && flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: wat2wasm [-o copy.wasm]... FILE.wat...")
		os.Exit(2)
	}
	for _, in := range flag.Args() {
		if err := convert(in, also); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

func convert(in string, also []string) error {
	if !strings.HasSuffix(in, ".wat") {
		return fmt.Errorf("%s: not a .wat file", in)
	}
	src, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	bin, err := wat.Assemble(src)
	if err != nil {
		return fmt.Errorf("%s:%w", in, err)
	}
	for _, out := range append([]string{strings.TrimSuffix(in, ".wat") + ".wasm"}, also...) {
		if err := os.WriteFile(out, bin, 0o644); err != nil {
			return err
		}
	}
	return nil
}
