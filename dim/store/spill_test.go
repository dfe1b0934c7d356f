package store

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/sluicesql/sluice/types"
)

// TestSpill builds the random tables of TestRandomTables in a spill
// directory and checks them the same way; the directory stays empty (the
// files are removed as soon as they are mapped).
func TestSpill(t *testing.T) {
	if !spillSupported {
		t.Skip("no spilling on " + runtime.GOOS)
	}
	dir := t.TempDir()
	for seed := range uint64(3) {
		r := rand.New(rand.NewPCG(seed, 11))
		rows := randTable(r, 50+r.IntN(3000))
		for _, keyCols := range testKeySets {
			t.Run(fmt.Sprint(seed, keyCols), func(t *testing.T) {
				checkTable(t, r, testCols, keyCols, rows, Config{SpillDir: dir, Rows: r.IntN(2) * len(rows)})
			})
		}
	}
	if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
		t.Fatalf("the spill directory holds %d files (%v)", len(ents), err)
	}
}

// TestSpillLifetime checks that a spilled index's mappings go when it is
// collected, and that the strings looked up in it outlive them (they are
// copies: a string pointing into an unmapped file would fault).
func TestSpillLifetime(t *testing.T) {
	if !spillSupported {
		t.Skip("no spilling on " + runtime.GOOS)
	}
	cols := []types.Type{{Kind: types.KindBigInt}, {Kind: types.KindVarChar}, {Kind: types.KindArray, Elem: &types.Type{Kind: types.KindVarChar}}}
	var rows [][]types.Value
	for i := range 200_000 { // more than one table resize, and a second arena chunk
		s := fmt.Sprintf("value %d %s", i, strings.Repeat("x", 300))
		rows = append(rows, []types.Value{types.BigIntValue(int64(i)), types.StringValue(s), types.ArrayValue([]types.Value{types.StringValue(s)})})
	}
	ix := buildWith(t, cols, []int{0}, rows, Config{SpillDir: t.TempDir()})
	if !ix.Spilled() || len(ix.arena.chunks) < 2 {
		t.Fatalf("spilled %v, %d chunks; want a spilled index of 2 chunks or more", ix.Spilled(), len(ix.arena.chunks))
	}
	sp := ix.spill
	if n := sp.mapped(); n < ix.Bytes() {
		t.Fatalf("%d bytes mapped for an index of %d", n, ix.Bytes())
	}
	var kept, elems []string
	keys := make([][]types.Value, 0, 1000)
	for i := range 1000 {
		keys = append(keys, []types.Value{types.BigIntValue(int64(i * 199))})
	}
	ix.LookupBatch(keys, func(i int, row []types.Value) bool {
		kept = append(kept, row[1].Str())
		elems = append(elems, row[2].Elems()[0].Str())
		return true
	})
	ix = nil
	deadline := time.Now().Add(10 * time.Second)
	for sp.mapped() != 0 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := sp.mapped(); n != 0 {
		t.Fatalf("%d bytes still mapped after the index was collected", n)
	}
	for i, s := range kept {
		want := fmt.Sprintf("value %d %s", i*199, strings.Repeat("x", 300))
		if s != want || elems[i] != want {
			t.Fatalf("string %d after the index went: %.20q, %.20q; want %.20q", i, s, elems[i], want)
		}
	}
}

func TestSpillErrors(t *testing.T) {
	if !spillSupported {
		t.Skip("no spilling on " + runtime.GOOS)
	}
	cols := []types.Type{{Kind: types.KindBigInt}}
	missing := t.TempDir() + "/missing"
	if _, err := NewBuilder(cols, []int{0}, Config{SpillDir: missing}); err == nil || !strings.Contains(err.Error(), "cannot spill") {
		t.Errorf("spill to a missing directory: %v", err)
	}
	file := t.TempDir() + "/file"
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NewBuilder(cols, []int{0}, Config{SpillDir: file}); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("spill to a file: %v", err)
	}
}

// TestCopyStrings checks where looked-up strings live: in the arena by
// default, in memory of their own with CopyStrings (so that a job's state
// holding them does not hold the arena).
func TestCopyStrings(t *testing.T) {
	cols := []types.Type{{Kind: types.KindBigInt}, {Kind: types.KindVarChar}, {Kind: types.KindVarBinary}}
	rows := [][]types.Value{{types.BigIntValue(1), types.StringValue("a name"), types.BytesValue([]byte{1, 2, 3})}}
	inArena := func(ix *Index, s string) bool {
		p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		for _, c := range ix.arena.chunks {
			if start := uintptr(unsafe.Pointer(&c[:1][0])); p >= start && p < start+uintptr(cap(c)) {
				return true
			}
		}
		return false
	}
	for _, copied := range []bool{false, true} {
		ix := buildWith(t, cols, []int{0}, rows, Config{CopyStrings: copied})
		ix.Lookup([]types.Value{types.BigIntValue(1)}, func(row []types.Value) bool {
			if row[1].Str() != "a name" || row[2].Str() != "\x01\x02\x03" {
				t.Fatalf("row %v", row)
			}
			for _, v := range row[1:] {
				if inArena(ix, v.Str()) == copied {
					t.Errorf("CopyStrings %v: %q in the arena: %v", copied, v.Str(), !copied)
				}
			}
			return true
		})
	}
}
