package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/internal/cputime"
)

// NexmarkQuery is one query file of the Nexmark suite (testdata/nexmark).
type NexmarkQuery struct {
	Name string // file name without .sql: q0, q14_builtin
	SQL  string
}

// NexmarkSuite is the Nexmark suite as testdata/nexmark holds it: the
// source and views (ddl.sql) and the queries, with their sinks.
type NexmarkSuite struct {
	Dir     string // absolute
	DDL     string
	Queries []NexmarkQuery // by query number, then name
	// Config holds options set for every run (as SET would), to compare
	// a setting's effect.
	Config map[string]string
}

// LoadNexmark reads the suite from dir.
func LoadNexmark(dir string) (*NexmarkSuite, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	ddl, err := os.ReadFile(filepath.Join(abs, "ddl.sql"))
	if err != nil {
		return nil, fmt.Errorf("cannot read the Nexmark suite: %w", err)
	}
	files, err := filepath.Glob(filepath.Join(abs, "q*.sql"))
	if err != nil {
		return nil, err
	}
	s := &NexmarkSuite{Dir: abs, DDL: string(ddl)}
	for _, f := range files {
		q, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		s.Queries = append(s.Queries, NexmarkQuery{Name: strings.TrimSuffix(filepath.Base(f), ".sql"), SQL: string(q)})
	}
	slices.SortFunc(s.Queries, func(a, b NexmarkQuery) int {
		if d := queryNumber(a.Name) - queryNumber(b.Name); d != 0 {
			return d
		}
		return strings.Compare(a.Name, b.Name)
	})
	return s, nil
}

// queryNumber is n of a name "qn" or "qn_...".
func queryNumber(name string) int {
	digits := strings.TrimPrefix(name, "q")
	if i := strings.IndexFunc(digits, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		digits = digits[:i]
	}
	n, _ := strconv.Atoi(digits)
	return n
}

// Query returns the query called name, or nil.
func (s *NexmarkSuite) Query(name string) *NexmarkQuery {
	for i := range s.Queries {
		if s.Queries[i].Name == name {
			return &s.Queries[i]
		}
	}
	return nil
}

// Script returns the script that runs query name over events events at
// rate events per second of event time: the source, the views and the
// query, with the placeholders replaced; outDir is where q10 writes.
func (s *NexmarkSuite) Script(name string, events int64, rate int, outDir string) (string, error) {
	q := s.Query(name)
	if q == nil {
		return "", fmt.Errorf("no Nexmark query %s in %s", name, s.Dir)
	}
	return strings.NewReplacer("$EVENTS", strconv.FormatInt(events, 10), "$RATE", strconv.Itoa(rate),
		"$OUT_DIR", filepath.ToSlash(outDir), "$DATA_DIR", filepath.ToSlash(s.Dir)).Replace(s.DDL + "\n" + q.SQL), nil
}

// NexmarkResult is one measured run of a query.
type NexmarkResult struct {
	Name    string
	Events  int64
	CPU     time.Duration // of the whole process while the query ran
	Elapsed time.Duration
}

// EventsPerCPUSecond is the throughput per core.
func (r NexmarkResult) EventsPerCPUSecond() float64 {
	return float64(r.Events) / r.CPU.Seconds()
}

// RunNexmark runs query name over events events as the published suite
// does (10,000 events per second of event time, the generator's default
// sizes), into its sink, and measures the process's CPU time. With
// profile set, it writes a CPU profile of the run there.
func (s *NexmarkSuite) RunNexmark(ctx context.Context, name string, events int64, profile io.Writer) (NexmarkResult, error) {
	out, err := os.MkdirTemp("", "nexmark-"+name+"-")
	if err != nil {
		return NexmarkResult{}, err
	}
	defer os.RemoveAll(out)
	script, err := s.Script(name, events, 10000, out)
	if err != nil {
		return NexmarkResult{}, err
	}
	e, err := sluice.Open(sluice.Options{Stdout: io.Discard, Config: s.Config})
	if err != nil {
		return NexmarkResult{}, err
	}
	defer e.Close()
	if profile != nil {
		if err := pprof.StartCPUProfile(profile); err != nil {
			return NexmarkResult{}, err
		}
		defer pprof.StopCPUProfile()
	}
	start, cpu := time.Now(), cputime.Seconds()
	if err := e.Run(ctx, name+".sql", []byte(script)); err != nil {
		return NexmarkResult{}, fmt.Errorf("%s: %s", name, sluice.FormatError(err, []byte(script)))
	}
	return NexmarkResult{Name: name, Events: events,
		CPU:     time.Duration((cputime.Seconds() - cpu) * float64(time.Second)),
		Elapsed: time.Since(start)}, nil
}

// FlinkPerCore is, per query, Flink's published throughput per core in
// the nexmark project's suite, in events per second.
var FlinkPerCore = map[string]float64{
	"q0": 155e3, "q1": 158e3, "q2": 175e3, "q3": 152e3, "q4": 34e3, "q5": 22e3, "q7": 12.3e3,
	"q8": 146e3, "q9": 14.2e3, "q11": 39.7e3, "q12": 75.7e3, "q13": 131e3, "q14": 161e3,
	"q15": 72e3, "q16": 18.7e3, "q17": 117e3, "q18": 53.7e3, "q19": 44e3, "q20": 19e3,
	"q21": 98.5e3, "q22": 130e3,
}

// FloorFactor is how many times Flink's per-core figure Sluice holds
// itself to, in events per CPU second.
const FloorFactor = 5

// FloorOf is the floor of a query file, FloorFactor times Flink's
// per-core figure: q14_builtin is measured against q14's.
func FloorOf(name string) (float64, bool) {
	f, ok := FlinkPerCore[name]
	if !ok {
		base, _, _ := strings.Cut(name, "_")
		f, ok = FlinkPerCore[base]
	}
	return f * FloorFactor, ok
}
