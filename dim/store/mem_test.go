package store

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/sluicesql/sluice/types"
)

// TestMemory is the acceptance benchmark of issue 5: ten million rows with
// a 50-byte STRING key and a 20-byte STRING value, loaded into an Index and
// into a map[string]string, with the resident memory of each, the load
// time and the lookup rate on one core. It needs about 2.5 GB and a minute,
// so it runs only when asked:
//
//	SLUICE_DIM_BENCH=1 go test ./dim/store -run TestMemory -v -timeout 30m
//
// SLUICE_DIM_ROWS changes the number of rows (the floors are checked only
// at ten million).
func TestMemory(t *testing.T) {
	if os.Getenv("SLUICE_DIM_BENCH") == "" {
		t.Skip("set SLUICE_DIM_BENCH=1 to run the 10M-row memory benchmark")
	}
	n := 10_000_000
	if s := os.Getenv("SLUICE_DIM_ROWS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			t.Fatal(err)
		}
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1)) // lookups per core; Build is single-threaded anyway
	cols := []types.Type{
		{Kind: types.KindVarChar, Precision: types.MaxLength},
		{Kind: types.KindVarChar, Precision: types.MaxLength},
	}
	var key [50]byte
	var val [20]byte

	base := measure()
	start := time.Now()
	ix, err := Build(cols, []int{0}, func(yield func([]types.Value) error) error {
		row := make([]types.Value, 2)
		for i := range n {
			// The row's strings point into reused buffers: Build copies.
			row[0] = types.StringValue(unsafe.String(&key[0], len(key)))
			row[1] = types.StringValue(unsafe.String(&val[0], len(val)))
			benchKey(&key, i)
			benchValue(&val, i)
			if err := yield(row); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	load := time.Since(start)
	st := measure().sub(base)
	if ix.Rows() != n || ix.Keys() != n {
		t.Fatalf("%d rows, %d keys; want %d", ix.Rows(), ix.Keys(), n)
	}

	// Probe keys, made after the memory was measured: a million keys of
	// the table in random order.
	r := rand.New(rand.NewPCG(1, 1))
	probes := make([][]types.Value, 1<<20)
	for j := range probes {
		i := r.IntN(n)
		benchKey(&key, i)
		probes[j] = []types.Value{types.StringValue(string(key[:]))}
	}
	rd := ix.NewReader()
	var hits int
	var vlen int
	visit := func(row []types.Value) bool { vlen += len(row[1].Str()); return true }
	lookups := 10_000_000
	start = time.Now()
	for j := range lookups {
		hits += rd.Lookup(probes[j&(len(probes)-1)], visit)
	}
	lookupTime := time.Since(start)
	if hits != lookups || vlen != 20*lookups {
		t.Fatalf("%d hits of %d lookups, %d value bytes", hits, lookups, vlen)
	}
	nsStore := float64(lookupTime.Nanoseconds()) / float64(lookups)
	// A miss: keys of the same shape that are not in the table.
	for j := range probes {
		benchKey(&key, n+r.IntN(n))
		probes[j] = []types.Value{types.StringValue(string(key[:]))}
	}
	start = time.Now()
	misses := 0
	for j := range lookups {
		misses += rd.Lookup(probes[j&(len(probes)-1)], visit)
	}
	nsMiss := float64(time.Since(start).Nanoseconds()) / float64(lookups)
	if misses != 0 {
		t.Fatalf("%d rows found for absent keys", misses)
	}
	bytes := ix.Bytes()
	runtime.KeepAlive(ix)
	ix, rd, probes = nil, nil, nil

	// The same data the ordinary way.
	base = measure()
	start = time.Now()
	m := make(map[string]string, n)
	for i := range n {
		benchKey(&key, i)
		benchValue(&val, i)
		m[string(key[:])] = string(val[:])
	}
	mapLoad := time.Since(start)
	mst := measure().sub(base)
	mkeys := make([]string, 1<<20)
	for j := range mkeys {
		benchKey(&key, r.IntN(n))
		mkeys[j] = string(key[:])
	}
	start = time.Now()
	vlen = 0
	for j := range lookups {
		vlen += len(m[mkeys[j&(len(mkeys)-1)]])
	}
	nsMap := float64(time.Since(start).Nanoseconds()) / float64(lookups)
	if vlen != 20*lookups {
		t.Fatal("map lookups missed")
	}
	runtime.KeepAlive(m)

	const mb = 1 << 20
	t.Logf("%d rows, key 50 B, value 20 B (raw data %d MB)", n, n*70/mb)
	t.Logf("store: Build %.2fs, RSS %d MB, heap in use %d MB, Bytes() %d MB, lookup hit %.0f ns (%.2fM/s), miss %.0f ns",
		load.Seconds(), st.rss/mb, st.heap/mb, bytes/mb, nsStore, 1e3/nsStore, nsMiss)
	t.Logf("map[string]string: load %.2fs, RSS %d MB, heap in use %d MB, lookup hit %.0f ns",
		mapLoad.Seconds(), mst.rss/mb, mst.heap/mb, nsMap)
	t.Logf("store/map: RSS %.0f%%, heap %.0f%%", 100*float64(st.rss)/float64(mst.rss), 100*float64(st.heap)/float64(mst.heap))
	if n != 10_000_000 {
		return
	}
	if st.rss > 450*mb {
		t.Errorf("store RSS %d MB > 450 MB", st.rss/mb)
	}
	if float64(st.rss) > 0.4*float64(mst.rss) {
		t.Errorf("store RSS %d MB > 40%% of the map's %d MB", st.rss/mb, mst.rss/mb)
	}
	if load > 20*time.Second {
		t.Errorf("Build took %v > 20s", load)
	}
	if nsStore > 200 {
		t.Errorf("%.0f ns per lookup: fewer than 5M lookups per second", nsStore)
	}
}

// benchKey writes the 50-byte key of row i: a prefix and i in 36 digits.
func benchKey(k *[50]byte, i int) {
	copy(k[:], "dimension-key-")
	for j := len(k) - 1; j >= 14; j-- {
		k[j] = byte('0' + i%10)
		i /= 10
	}
}

// benchValue writes the 20-byte value of row i.
func benchValue(v *[20]byte, i int) {
	copy(v[:], "value-")
	i = i*7919 + 13
	for j := len(v) - 1; j >= 6; j-- {
		v[j] = byte('a' + i%26)
		i /= 26
	}
}

type memStats struct{ rss, heap int64 }

func (a memStats) sub(b memStats) memStats { return memStats{a.rss - b.rss, a.heap - b.heap} }

// measure collects garbage, returns freed memory to the system and reads
// the resident set size and the heap in use.
func measure() memStats {
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		panic(err)
	}
	f := strings.Fields(string(b))
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		panic(fmt.Sprint("statm: ", err))
	}
	return memStats{rss: pages * int64(os.Getpagesize()), heap: int64(ms.HeapInuse)}
}
