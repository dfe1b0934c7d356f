package metricstore

import (
	"fmt"
	"hash/maphash"
	"maps"
	"math/rand/v2"
	"testing"
)

// Random puts, deletes, compactions and evictions, with a hash that
// collides often and small chunks: the table holds what a map would,
// and its chunks stay within twice the live bytes (and a chunk).
func TestTableRandom(t *testing.T) {
	for seed := range uint64(6) {
		rnd := rand.New(rand.NewPCG(seed, 9))
		tb := newTable(maphash.MakeSeed(), 512)
		if seed%2 == 0 {
			tb.hashFn = func(b []byte) uint64 { return uint64(len(b) % 3) }
		}
		model := map[string]string{}
		evicted := map[string]string{}
		for step := range 20000 {
			k := fmt.Sprint("k", rnd.IntN(300))
			switch r := rnd.IntN(100); {
			case r < 60:
				v := fmt.Sprint(step, "-", rnd.IntN(1<<(rnd.IntN(12)+1)))
				_, rec, _ := tb.at(tb.put([]byte(k), []byte(v)))
				if string(rec) != v {
					t.Fatalf("put returned %q, want %q", rec, v)
				}
				model[k] = v
				delete(evicted, k)
			case r < 80:
				_, had := model[k]
				if tb.del([]byte(k)) != had {
					t.Fatalf("step %d: del(%s) = %v", step, k, !had)
				}
				delete(model, k)
			case r < 81:
				n, err := tb.evict(rnd.IntN(50), func(k, v []byte) error {
					if model[string(k)] != string(v) {
						t.Fatalf("evicted %s=%s, the latest is %s", k, v, model[string(k)])
					}
					evicted[string(k)] = string(v)
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				for k := range evicted {
					delete(model, k)
				}
				_ = n
			}
			for tb.compact(rnd.IntN(20)) && rnd.IntN(4) > 0 {
			}
			if step%500 == 0 || step == 19999 {
				for tb.compact(100) {
				}
				if tb.keys != len(model) {
					t.Fatalf("step %d: %d keys, want %d", step, tb.keys, len(model))
				}
				got := map[string]string{}
				tb.each(func(k, v []byte) { got[string(k)] = string(v) })
				if !maps.Equal(got, model) {
					t.Fatalf("step %d: each gives %d keys, want %d", step, len(got), len(model))
				}
				live := 0
				for k, v := range model {
					rec, ok := tb.get([]byte(k))
					if !ok || string(rec) != v {
						t.Fatalf("step %d: get(%s) = %q, %v; want %q", step, k, rec, ok, v)
					}
					live += len(k) + len(v) + 2
				}
				// getMany agrees, over present and absent keys.
				var ks [][]byte
				for i := range 320 {
					ks = append(ks, []byte(fmt.Sprint("k", i)))
				}
				recs := make([][]byte, len(ks))
				tb.getMany(ks, recs)
				for i, k := range ks {
					if v, ok := model[string(k)]; ok != (recs[i] != nil) || ok && string(recs[i]) != v {
						t.Fatalf("step %d: getMany(%s) = %q, want %q", step, k, recs[i], v)
					}
				}
				for k := range evicted {
					if _, ok := tb.get([]byte(k)); ok {
						t.Fatalf("an evicted key %s is still there", k)
					}
				}
				if limit := int64(2*live + 3*tb.chunkSize + 4096); tb.size > limit {
					t.Errorf("step %d: chunks of %d bytes for %d live bytes", step, tb.size, live)
				}
			}
		}
		if seed%2 == 0 && len(tb.overflow) == 0 && len(model) > 3 {
			t.Errorf("the colliding hash put nothing in the overflow")
		}
	}
}
