package crash_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// TestCrashJDBC is the crash test of the jdbc sink: one job, with its
// state in a 'state.dir', reads a directory of events and upserts
// aggregates into PostgreSQL tables by their primary keys, exactly-once
// (the default): per key its count, sum and maximum (every event updates
// its key's row), and how many keys have each count (rows come and go: a
// count no key has any more is deleted; which counts appear on the way
// depends on how the input happened to be batched). A third table gets
// the per-key aggregate at least once, written between checkpoints too (a
// small 'sink.buffer-flush.max-rows'), so that a kill leaves rows in the
// database that the restarted job's state does not have yet: replayed,
// the upserts of every key touched since the checkpoint come again. The
// process is killed with SIGKILL at random moments and restarted; between
// phases, files are added to the input. When a run ends by itself every
// table must hold exactly what the events give.
//
// It needs PostgreSQL (SLUICE_PG_DSN, e.g.
// postgres://postgres@127.0.0.1:5432/test) besides SLUICE_CRASH_TEST=1.
func TestCrashJDBC(t *testing.T) {
	dsn := os.Getenv("SLUICE_PG_DSN")
	if dsn == "" {
		t.Skip("set SLUICE_PG_DSN (e.g. postgres://postgres@127.0.0.1:5432/test) to crash a job writing to PostgreSQL")
	}
	rng, dir := crashSetup(t, 0x7db5, "jdbc")
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	db := stdlib.OpenDB(*cfg)
	t.Cleanup(func() { db.Close() })
	suffix := strconv.FormatInt(time.Now().UnixNano()%1e9, 10)
	counts, hist, countsALO := "sluice_crash_counts_"+suffix, "sluice_crash_hist_"+suffix, "sluice_crash_counts_alo_"+suffix
	for _, q := range []string{
		"CREATE TABLE " + counts + " (k TEXT PRIMARY KEY, n BIGINT NOT NULL, s BIGINT NOT NULL, hi INT NOT NULL)",
		"CREATE TABLE " + hist + " (n BIGINT PRIMARY KEY, keys BIGINT NOT NULL)",
		"CREATE TABLE " + countsALO + " (k TEXT PRIMARY KEY, n BIGINT NOT NULL, s BIGINT NOT NULL, hi INT NOT NULL)",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		db.Exec("DROP TABLE " + counts)
		db.Exec("DROP TABLE " + hist)
		db.Exec("DROP TABLE " + countsALO)
	})

	bin := buildSluice(t, dir, os.Getenv("SLUICE_CRASH_RACE") == "1")
	in := filepath.Join(dir, "in")
	os.RemoveAll(in) // a kept work directory's earlier run
	os.RemoveAll(filepath.Join(dir, "state"))
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	u := url.URL{Host: fmt.Sprintf("%s:%d", cfg.Host, cfg.Port), Path: "/" + cfg.Database}
	jdbcURL := "jdbc:postgresql:" + u.String()
	opts := fmt.Sprintf("'connector' = 'jdbc', 'url' = '%s', 'username' = '%s'", jdbcURL, cfg.User)
	if cfg.Password != "" {
		opts += fmt.Sprintf(", 'password' = '%s'", cfg.Password)
	}
	job := fmt.Sprintf(`SET 'state.dir' = '%[1]s/state';
SET 'execution.checkpointing.interval' = '%[6]dms';
SET 'parallelism.default' = '2';
CREATE TABLE events (id BIGINT, k STRING, v INT) WITH ('connector' = 'filesystem', 'path' = '%[1]s/in', 'format' = 'json',
  'source.max-open-files' = '2');
CREATE TABLE counts (k STRING, n BIGINT, s BIGINT, hi INT, PRIMARY KEY (k) NOT ENFORCED) WITH (%[2]s, 'table-name' = '%[3]s');
CREATE TABLE hist (n BIGINT, keys BIGINT, PRIMARY KEY (n) NOT ENFORCED) WITH (%[2]s, 'table-name' = '%[4]s');
CREATE TABLE counts_alo (k STRING, n BIGINT, s BIGINT, hi INT, PRIMARY KEY (k) NOT ENFORCED) WITH (%[2]s, 'table-name' = '%[5]s',
  'sink.delivery-guarantee' = 'at-least-once', 'sink.buffer-flush.max-rows' = '40', 'sink.buffer-flush.interval' = '20ms');
EXECUTE STATEMENT SET BEGIN
INSERT INTO counts SELECT k, COUNT(*), SUM(v), MAX(v) FROM events GROUP BY k;
INSERT INTO hist SELECT n, COUNT(*) FROM (SELECT k, COUNT(*) AS n FROM events GROUP BY k) c GROUP BY n;
INSERT INTO counts_alo SELECT k, COUNT(*), SUM(v), MAX(v) FROM events GROUP BY k;
END;
`, dir, opts, counts, hist, countsALO, checkpointEvery.Milliseconds())
	sqlPath := filepath.Join(dir, "job.sql")
	if err := os.WriteFile(sqlPath, []byte(job), 0o644); err != nil {
		t.Fatal(err)
	}

	const (
		phases          = 3
		rowsPerPhase    = 150_000
		killsPerPhase   = 3
		keys            = 400
		minKills        = 5
		filesPerPhase   = 3
		startupKillSpan = 50 * time.Millisecond
	)
	type event struct {
		k string
		v int64
	}
	var events []event
	nextID := 0
	kills := 0
	for phase := 1; phase <= phases; phase++ {
		for f := range filesPerPhase {
			var b strings.Builder
			for range rowsPerPhase / filesPerPhase {
				// Skewed keys: a few keys get most events, so that
				// counts differ widely.
				k := rng.IntN(keys)
				if rng.IntN(3) == 0 {
					k = rng.IntN(10)
				}
				e := event{k: "k" + strconv.Itoa(k), v: rng.Int64N(1000)}
				events = append(events, e)
				fmt.Fprintf(&b, `{"id":%d,"k":"%s","v":%d}`+"\n", nextID, e.k, e.v)
				nextID++
			}
			if err := os.WriteFile(filepath.Join(in, fmt.Sprintf("p%d-%d.jsonl", phase, f)), []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for run := 1; ; run++ {
			log := filepath.Join(dir, fmt.Sprintf("jdbc-phase%d-run%d.log", phase, run))
			p := startJob(t, bin, sqlPath, log)
			if run > killsPerPhase {
				r := p.wait(t, runTimeout)
				if !r.ok() {
					t.Fatalf("phase %d, run %d: %s\n%s", phase, run, r, tail(log))
				}
				t.Logf("phase %d: run %d ended by itself after %v", phase, run, r.took.Round(time.Millisecond))
				break
			}
			// A quarter of the kills come while the job starts or
			// restores; the others once the committed output covers a
			// random share of the events left (the exactly-once table's
			// counts add up to the events its checkpoints hold), a random
			// moment between two checkpoints later.
			var r runResult
			var plan string
			done := committedEvents(t, db, counts)
			if left := int64(len(events)) - done; rng.IntN(4) == 0 || left < 100 {
				delay := time.Duration(rng.Int64N(int64(startupKillSpan)))
				plan = fmt.Sprintf("%v after the start", delay.Round(time.Millisecond))
				r = p.killAfter(t, delay)
			} else {
				target := done + 1 + rng.Int64N(left/2)
				delay := time.Duration(rng.Int64N(int64(checkpointEvery)))
				plan = fmt.Sprintf("%v after %d events were committed (%d before the run)", delay.Round(time.Millisecond), target, done)
				r = killAtProgress(t, p, func() bool { return committedEvents(t, db, counts) >= target }, delay)
			}
			if !r.killed {
				if !r.ok() {
					t.Fatalf("phase %d, run %d: %s\n%s", phase, run, r, tail(log))
				}
				t.Logf("phase %d: run %d ended by itself after %v, before its kill (%s)", phase, run, r.took.Round(time.Millisecond), plan)
				break
			}
			t.Logf("phase %d: run %d killed after %v (%s): %d events committed", phase, run, r.took.Round(time.Millisecond), plan, committedEvents(t, db, counts))
			kills++
		}
		checkJDBCTables(t, db, counts, hist, countsALO, func(yield func(k string, v int64) bool) {
			for _, e := range events {
				if !yield(e.k, e.v) {
					return
				}
			}
		})
	}
	if kills < minKills {
		t.Errorf("only %d SIGKILLs came while the job ran, want at least %d", kills, minKills)
	}
	t.Logf("%d SIGKILLs over %d phases, %d events", kills, phases, len(events))
}

// checkpointEvery is the job's checkpoint interval.
const checkpointEvery = 50 * time.Millisecond

// committedEvents is how many events the exactly-once counts table
// covers.
func committedEvents(t *testing.T, db *sql.DB, counts string) int64 {
	t.Helper()
	var n sql.NullInt64
	if err := db.QueryRow("SELECT SUM(n) FROM " + counts).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n.Int64
}

// killAtProgress sends SIGKILL delay after reached reports true, unless
// the run has ended by then; after runTimeout it kills the run and
// reports a failure.
func killAtProgress(t *testing.T, p *proc, reached func() bool, delay time.Duration) runResult {
	t.Helper()
	deadline := time.Now().Add(runTimeout)
	for !reached() {
		select {
		case <-p.done:
			return p.result(false)
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.cmd.Process.Kill()
			<-p.done
			return runResult{took: time.Since(p.start), err: fmt.Errorf("made too little progress within %v and was killed", runTimeout)}
		}
	}
	select {
	case <-p.done:
		return p.result(false)
	case <-time.After(delay):
	}
	sent := p.cmd.Process.Signal(syscall.SIGKILL) == nil
	<-p.done
	return p.result(sent)
}

// checkJDBCTables compares the tables with what the events give.
func checkJDBCTables(t *testing.T, db *sql.DB, counts, hist, countsALO string, events func(func(string, int64) bool)) {
	t.Helper()
	type agg struct{ n, s, hi int64 }
	per := map[string]*agg{}
	for k, v := range events {
		a := per[k]
		if a == nil {
			a = &agg{hi: -1}
			per[k] = a
		}
		a.n++
		a.s += v
		a.hi = max(a.hi, v)
	}
	var want, got []string
	h := map[int64]int64{}
	for k, a := range per {
		want = append(want, fmt.Sprintf("%s|%d|%d|%d", k, a.n, a.s, a.hi))
		h[a.n]++
	}
	got = queryRows(t, db, "SELECT k, n, s, hi FROM "+counts)
	compareRows(t, counts, want, got)
	compareRows(t, countsALO, want, queryRows(t, db, "SELECT k, n, s, hi FROM "+countsALO))
	want = want[:0]
	for n, c := range h {
		want = append(want, fmt.Sprintf("%d|%d", n, c))
	}
	compareRows(t, hist, want, queryRows(t, db, "SELECT n, keys FROM "+hist))
}

func queryRows(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rs, err := db.QueryContext(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	cols, _ := rs.Columns()
	var out []string
	for rs.Next() {
		vals := make([]string, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.Join(vals, "|"))
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// compareRows fails the test unless the table holds exactly the rows
// wanted, and says which differ.
func compareRows(t *testing.T, table string, want, got []string) {
	t.Helper()
	slices.Sort(want)
	slices.Sort(got)
	if slices.Equal(want, got) {
		t.Logf("%s: %d rows, exact", table, len(got))
		return
	}
	var missing, extra []string
	for _, w := range want {
		if _, ok := slices.BinarySearch(got, w); !ok {
			missing = append(missing, w)
		}
	}
	for _, g := range got {
		if _, ok := slices.BinarySearch(want, g); !ok {
			extra = append(extra, g)
		}
	}
	t.Errorf("%s: %d rows, want %d; missing or wrong (first 10 of %d): %v; unexpected (first 10 of %d): %v",
		table, len(got), len(want), len(missing), missing[:min(10, len(missing))], len(extra), extra[:min(10, len(extra))])
}
