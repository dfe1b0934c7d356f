//go:build linux

package store

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/sluicesql/sluice/types"
)

// TestMemory is the acceptance benchmark of issue 5: ten million rows with
// a 50-byte STRING key and a 20-byte STRING value, loaded into an Index and
// into a map[string]string, with the resident memory of each, the load
// time and the lookup rate on one core, beside the machine's memory
// latency. It needs about 3 GB and a few minutes, so it runs only when
// asked:
//
//	SLUICE_DIM_BENCH=1 go test ./dim/store -run TestMemory -v -timeout 30m
//
// SLUICE_DIM_ROWS changes the number of rows; SLUICE_DIM_HINT=1 builds
// with BuildSized, given the number of rows; SLUICE_DIM_SPILL=dir spills
// the index to memory-mapped files in dir. At ten million rows it fails
// if the memory floors of the issue are not met; it reports the timings
// against their floors without failing.
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

	hint := 0
	if os.Getenv("SLUICE_DIM_HINT") != "" {
		hint = n // BuildSized, as a reload would
	}
	base := measure()
	resetPeak()
	start := time.Now()
	b, err := NewBuilder(cols, []int{0}, Config{Rows: hint, SpillDir: os.Getenv("SLUICE_DIM_SPILL")})
	if err != nil {
		t.Fatal(err)
	}
	row := make([]types.Value, 2)
	for i := range n {
		// The row's strings point into reused buffers: Add copies.
		row[0] = types.StringValue(unsafe.String(&key[0], len(key)))
		row[1] = types.StringValue(unsafe.String(&val[0], len(val)))
		benchKey(&key, i)
		benchValue(&val, i)
		if err := b.Add(row); err != nil {
			t.Fatal(err)
		}
	}
	ix, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	load := time.Since(start)
	peak := statusKB("VmHWM")
	st := measure().sub(base)
	if ix.Rows() != n || ix.Keys() != n {
		t.Fatalf("%d rows, %d keys; want %d", ix.Rows(), ix.Keys(), n)
	}

	// Probe keys, made after the memory was measured: a million keys of
	// the table in random order.
	r := rand.New(rand.NewPCG(1, 1))
	// The keys are laid out in probe order, as the keys of a batch of
	// probe rows would be: reading them costs no cache miss, so the
	// figures are those of the lookups.
	probes := probeKeys(r, 1<<20, 0, n)
	rd := ix.NewReader()
	var hits int
	var vlen int
	visit := func(row []types.Value) bool { vlen += len(row[1].Str()); return true }
	lookups := 10_000_000
	hit := timeIt(func() {
		for j := range lookups {
			hits += rd.Lookup(probes[j&(len(probes)-1)], visit)
		}
	})
	if hits != lookups || vlen != 20*lookups {
		t.Fatalf("%d hits of %d lookups, %d value bytes", hits, lookups, vlen)
	}
	hits = 0
	batchHit := timeIt(func() {
		visit := func(_ int, row []types.Value) bool { vlen += len(row[1].Str()); return true }
		for j := 0; j+256 <= lookups; j += 256 {
			k := j & (len(probes) - 1)
			hits += rd.LookupBatch(probes[k:k+256], visit)
		}
	})
	if hits != lookups/256*256 {
		t.Fatalf("LookupBatch: %d hits of %d lookups", hits, lookups)
	}
	// A miss: keys of the same shape that are not in the table.
	probes = probeKeys(r, 1<<20, n, n)
	misses := 0
	miss := timeIt(func() {
		for j := range lookups {
			misses += rd.Lookup(probes[j&(len(probes)-1)], visit)
		}
	})
	if misses != 0 {
		t.Fatalf("%d rows found for absent keys", misses)
	}
	t.Logf("huge pages in use: %s", hugePages())
	bytes := ix.Bytes()
	spilled := ix.Spilled()
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
	for j, k := range probeKeys(r, len(mkeys), 0, n) {
		mkeys[j] = k[0].Str()
	}
	vlen = 0
	mapHit := timeIt(func() {
		for j := range lookups {
			vlen += len(m[mkeys[j&(len(mkeys)-1)]])
		}
	})
	if vlen != 20*lookups {
		t.Fatal("map lookups missed")
	}
	runtime.KeepAlive(m)

	const mb = 1 << 20
	per := func(d durations) string {
		return fmt.Sprintf("%.0f ns wall, %.0f ns CPU (%.2fM/s per core)", d.wall/float64(lookups), d.cpu/float64(lookups), float64(lookups)/d.cpu*1e3)
	}
	t.Logf("%d rows, key 50 B, value 20 B (raw data %d MB)", n, n*70/mb)
	t.Logf("store: Build (row hint %d) %.2fs, RSS %d MB, heap in use %d MB, Bytes() %d MB; peak RSS of the process while building %d MB (%d MB before)",
		hint, load.Seconds(), st.rss/mb, st.heap/mb, bytes/mb, peak>>10, base.rss/mb)
	if spilled {
		t.Logf("store: spilled to %s: resident %d MB of files, %d MB anonymous", os.Getenv("SLUICE_DIM_SPILL"), st.rssFile/mb, st.rssAnon/mb)
	}
	t.Logf("store: Lookup hit %s", per(hit))
	batchHit.wall *= float64(lookups) / float64(hits)
	batchHit.cpu *= float64(lookups) / float64(hits)
	t.Logf("store: LookupBatch hit %s", per(batchHit))
	t.Logf("store: Lookup miss %s", per(miss))
	t.Logf("map[string]string: load %.2fs, RSS %d MB, heap in use %d MB, lookup hit %s",
		mapLoad.Seconds(), mst.rss/mb, mst.heap/mb, per(mapHit))
	t.Logf("store/map: RSS %.0f%%, heap %.0f%%", 100*float64(st.rss)/float64(mst.rss), 100*float64(st.heap)/float64(mst.heap))
	t.Logf("machine: a dependent random read of a %d MB array takes %s", bytes/mb, memLatency(int(bytes)))
	if n != 10_000_000 || spilled {
		return
	}
	if st.rss > 450*mb {
		t.Errorf("store RSS %d MB > 450 MB", st.rss/mb)
	}
	if float64(st.rss) > 0.4*float64(mst.rss) {
		t.Errorf("store RSS %d MB > 40%% of the map's %d MB", st.rss/mb, mst.rss/mb)
	}
	// Timings are reported, never asserted (docs/benchmarks.md): on a
	// shared machine they measure the neighbours too.
	if load > 20*time.Second {
		t.Logf("below the floor: Build took %v > 20s", load)
	}
	// The floor is for the lookups a lookup join makes: batched.
	if ns := batchHit.cpu / float64(lookups); ns > 200 {
		t.Logf("below the floor: %.0f ns of CPU per batched lookup, fewer than 5M lookups per second per core", ns)
	}
}

// probeKeys returns m keys of rows from+rand(n), their values and their
// bytes each in one allocation, in order.
func probeKeys(r *rand.Rand, m, from, n int) [][]types.Value {
	buf := make([]byte, 50*m)
	vals := make([]types.Value, m)
	keys := make([][]types.Value, m)
	for j := range keys {
		k := (*[50]byte)(buf[50*j:])
		benchKey(k, from+r.IntN(n))
		vals[j] = types.StringValue(unsafe.String(&k[0], 50))
		keys[j] = vals[j : j+1 : j+1]
	}
	return keys
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

type durations struct{ wall, cpu float64 } // nanoseconds

// timeIt runs f on one locked OS thread and returns the wall time and the
// thread's CPU time: on a shared machine the wall time also counts the
// time other processes held the core, the CPU time is what one core spent.
func timeIt(f func()) durations {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu0 := threadCPU()
	start := time.Now()
	f()
	return durations{wall: float64(time.Since(start).Nanoseconds()), cpu: float64(threadCPU() - cpu0)}
}

// threadCPU returns the CPU time of the calling thread in nanoseconds.
func threadCPU() int64 {
	const rusageThread = 1 // RUSAGE_THREAD
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		panic(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

type memStats struct{ rss, heap, rssFile, rssAnon int64 }

func (a memStats) sub(b memStats) memStats {
	return memStats{a.rss - b.rss, a.heap - b.heap, a.rssFile - b.rssFile, a.rssAnon - b.rssAnon}
}

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
	return memStats{rss: pages * int64(os.Getpagesize()), heap: int64(ms.HeapInuse),
		rssFile: statusKB("RssFile") << 10, rssAnon: statusKB("RssAnon") << 10}
}

// memLatency measures the machine's memory: reads of a random cycle
// through an array of about size bytes (huge pages advised, as the store's
// are), each read's address depending on the one before, as a lookup's
// record address depends on its slot. A hit costs about two such reads.
func memLatency(size int) string {
	n := size / 8
	a := make([]uint64, n)
	adviseHuge(unsafe.Slice((*byte)(unsafe.Pointer(&a[0])), 8*n))
	perm := rand.New(rand.NewPCG(2, 2)).Perm(n)
	for i := range perm {
		a[perm[i]] = uint64(perm[(i+1)%n])
	}
	perm = nil
	const reads = 2_000_000
	var j uint64
	d := timeIt(func() {
		for range reads {
			j = a[j]
		}
	})
	runtime.KeepAlive(j)
	return fmt.Sprintf("%.0f ns wall, %.0f ns CPU", d.wall/reads, d.cpu/reads)
}

// resetPeak resets the peak RSS (VmHWM) of the process to its current RSS.
func resetPeak() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// statusKB returns a field of /proc/self/status in kB, -1 if it is not there.
func statusKB(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == field+":" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	return -1
}

// hugePages returns the process's anonymous memory in transparent huge
// pages, as /proc/self/smaps_rollup tells it.
func hugePages() string {
	b, err := os.ReadFile("/proc/self/smaps_rollup")
	if err != nil {
		return err.Error()
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "AnonHugePages:") {
			return strings.Join(strings.Fields(l)[1:], " ")
		}
	}
	return "unknown"
}
