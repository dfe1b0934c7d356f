package store

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/sluicesql/sluice/types"
)

// benchIndex builds an index of n rows with a 50-byte string key and a
// 20-byte string value, the shape of TestMemory.
func benchIndex(b *testing.B, n int) *Index {
	b.Helper()
	cols := []types.Type{{Kind: types.KindVarChar}, {Kind: types.KindVarChar}}
	var key [50]byte
	var val [20]byte
	ix, err := Build(cols, []int{0}, func(yield func([]types.Value) error) error {
		row := []types.Value{
			types.StringValue(unsafe.String(&key[0], len(key))),
			types.StringValue(unsafe.String(&val[0], len(val))),
		}
		for i := range n {
			benchKey(&key, i)
			benchValue(&val, i)
			if err := yield(row); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return ix
}

func BenchmarkBuild(b *testing.B) {
	for _, n := range []int{1000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				benchIndex(b, n)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
		})
	}
}

func BenchmarkLookup(b *testing.B) {
	for _, n := range []int{1000, 1_000_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			ix := benchIndex(b, n)
			r := rand.New(rand.NewPCG(1, 1))
			probes := make([][]types.Value, 1<<16)
			var key [50]byte
			for j := range probes {
				benchKey(&key, r.IntN(n))
				probes[j] = []types.Value{types.StringValue(string(key[:]))}
			}
			rd := ix.NewReader()
			visit := func([]types.Value) bool { return true }
			b.ReportAllocs()
			j := 0
			for b.Loop() {
				if rd.Lookup(probes[j&(len(probes)-1)], visit) != 1 {
					b.Fatal("miss")
				}
				j++
			}
		})
	}
}

func BenchmarkLookupBatch(b *testing.B) {
	for _, n := range []int{1000, 1_000_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			ix := benchIndex(b, n)
			r := rand.New(rand.NewPCG(1, 1))
			probes := make([][]types.Value, 1<<16)
			var key [50]byte
			for j := range probes {
				benchKey(&key, r.IntN(n))
				probes[j] = []types.Value{types.StringValue(string(key[:]))}
			}
			rd := ix.NewReader()
			visit := func(int, []types.Value) bool { return true }
			b.ReportAllocs()
			j := 0
			for b.Loop() {
				if rd.LookupBatch(probes[j:j+256], visit) != 256 {
					b.Fatal("miss")
				}
				j = (j + 256) & (len(probes) - 1)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*256), "ns/key")
		})
	}
}

// BenchmarkMapLookup is the reference for BenchmarkLookup: the same rows
// in a map[string]string.
func BenchmarkMapLookup(b *testing.B) {
	for _, n := range []int{1000, 1_000_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			m := make(map[string]string, n)
			var key [50]byte
			var val [20]byte
			for i := range n {
				benchKey(&key, i)
				benchValue(&val, i)
				m[string(key[:])] = string(val[:])
			}
			r := rand.New(rand.NewPCG(1, 1))
			probes := make([]string, 1<<16)
			for j := range probes {
				benchKey(&key, r.IntN(n))
				probes[j] = string(key[:])
			}
			b.ReportAllocs()
			j := 0
			for b.Loop() {
				if len(m[probes[j&(len(probes)-1)]]) != 20 {
					b.Fatal("miss")
				}
				j++
			}
		})
	}
}
