// Command wat2wasm assembles WebAssembly text files (the subset package wat
// reads) into binary modules: each NAME.wat argument becomes NAME.wasm
// beside it. `go generate` runs it over the modules under testdata and
// examples; the output depends only on the input, so a regenerated tree is
// byte for byte the committed one.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/sluicesql/sluice/internal/wat"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: wat2wasm FILE.wat...")
		os.Exit(2)
	}
	for _, in := range os.Args[1:] {
		if err := convert(in); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

func convert(in string) error {
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
	return os.WriteFile(strings.TrimSuffix(in, ".wat")+".wasm", bin, 0o644)
}
