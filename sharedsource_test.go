package sluice_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/datagen"
	"github.com/sluicesql/sluice/internal/kafkatest"
	"github.com/sluicesql/sluice/types"
)

// sharedEngine is an engine whose jobs print into out and log into log.
type sharedEngine struct {
	*sluice.Engine
	t        *testing.T
	out, log *syncBuffer
	vars     map[string]string
}

func openShared(t *testing.T, opts sluice.Options, vars map[string]string) *sharedEngine {
	t.Helper()
	se := &sharedEngine{t: t, out: &syncBuffer{}, log: &syncBuffer{}, vars: vars}
	opts.Stdout, opts.Log = se.out, se.log
	e, err := sluice.Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	se.Engine = e
	t.Cleanup(func() { e.Close() })
	return se
}

// exec executes src (with the engine's variables replaced) and returns
// the job its last statement started, if any.
func (se *sharedEngine) exec(src string) *sluice.Job {
	se.t.Helper()
	for k, v := range se.vars {
		src = strings.ReplaceAll(src, k, v)
	}
	res, err := se.Exec(context.Background(), "test.sql", []byte(src))
	if err != nil {
		se.t.Fatal(sluice.FormatError(err, []byte(src)))
	}
	return res[len(res)-1].Job
}

// until waits for cond, failing the test with what() after a while.
func until(t *testing.T, cond func() bool, what func() string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// printed returns the ids of the rows the print sink with identifier id
// printed (the first column), in order.
func (se *sharedEngine) printed(id string) []int {
	var out []int
	for _, l := range strings.Split(se.out.String(), "\n") {
		if rest, ok := strings.CutPrefix(l, id+"> +I["); ok {
			var n int
			fmt.Sscan(strings.SplitN(rest, ",", 2)[0], &n)
			out = append(out, n)
		}
	}
	return out
}

// waitPrinted waits until sink id printed n rows, and returns their ids,
// sorted.
func (se *sharedEngine) waitPrinted(id string, n int) []int {
	se.t.Helper()
	until(se.t, func() bool { return len(se.printed(id)) >= n },
		func() string { return fmt.Sprintf("sink %s printed %d rows, want %d", id, len(se.printed(id)), n) })
	got := se.printed(id)
	slices.Sort(got)
	return got
}

// waitShared waits until the engine shares one source, with these jobs
// attached by subs partitions in all, and returns it.
func (se *sharedEngine) waitShared(subs int, jobs ...string) sluice.SharedSource {
	se.t.Helper()
	slices.Sort(jobs)
	until(se.t, func() bool {
		s := se.SharedSources()
		return len(s) == 1 && slices.Equal(s[0].Jobs, jobs) && s[0].Subscribers == subs
	}, func() string {
		return fmt.Sprintf("shared sources %+v, want jobs %v with %d partitions", se.SharedSources(), jobs, subs)
	})
	return se.SharedSources()[0]
}

func ids(from, to int, more ...int) []int {
	var out []int
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	out = append(out, more...)
	slices.Sort(out)
	return out
}

// produceIDs writes records {"id":i,"s":"<i>"} for i in [from, to), over
// the topic's two partitions.
func produceIDs(t *testing.T, bs, topic string, from, to int) {
	var recs []*kgo.Record
	for i := from; i < to; i++ {
		recs = append(recs, &kgo.Record{Partition: int32(i % 2), Value: fmt.Appendf(nil, `{"id":%d,"s":"%d"}`, i, i)})
	}
	kafkatest.ProduceTo(t, bs, topic, recs...)
}

const sharedKafkaDDL = `
CREATE TABLE src (id BIGINT, s STRING) WITH ('connector' = 'kafka', 'topic' = 'in',
  'properties.bootstrap.servers' = '$BS', 'scan.startup.mode' = 'earliest-offset', 'format' = 'json');
CREATE TABLE a (id BIGINT, s STRING) WITH ('connector' = 'print', 'print-identifier' = 'a');
CREATE TABLE b (id BIGINT, s STRING) WITH ('connector' = 'print', 'print-identifier' = 'b');
CREATE TABLE c (id BIGINT, n INT) WITH ('connector' = 'print', 'print-identifier' = 'c');
CREATE TABLE d (id BIGINT, s STRING) WITH ('connector' = 'print', 'print-identifier' = 'd');
CREATE TABLE e (id BIGINT, s STRING) WITH ('connector' = 'print', 'print-identifier' = 'e');
`

// Jobs started separately over one Kafka table read it through one reader
// per partition: a job started later reads from the table's startup
// position on its own until it has caught up with the shared reader, and
// then through it, so that it gets what it would get alone; a job that
// fails at run time (a CAST of its own) fails alone, and one that stops
// leaves the others reading; with the switch off, or the table's option
// off, a job reads on its own all along.
func TestSharedSourceKafka(t *testing.T) {
	bs := kafkatest.Start(t, 2, "in")
	se := openShared(t, sluice.Options{}, map[string]string{"$BS": bs})
	se.exec(sharedKafkaDDL)
	ja := se.exec(`INSERT INTO a SELECT id, s FROM src;`)
	produceIDs(t, bs, "in", 0, 50)
	se.waitPrinted("a", 50) // the reader has read the first 50 rows
	jb := se.exec(`INSERT INTO b SELECT id, UPPER(s) FROM src;`)
	se.waitShared(4, ja.Name, jb.Name)
	produceIDs(t, bs, "in", 50, 100)
	if got := se.waitPrinted("a", 100); !slices.Equal(got, ids(0, 100)) {
		t.Errorf("a printed %v", got)
	}
	if got := se.waitPrinted("b", 100); !slices.Equal(got, ids(0, 100)) {
		t.Errorf("b, started after the first 50 rows were read, printed %v", got)
	}
	for _, want := range []string{
		fmt.Sprintf("shared source src: job %s reads partition 0 on its own, from the table's startup position, until it reaches the shared reader", jb.Name),
		fmt.Sprintf("shared source src: job %s has caught up with the shared reader on partition 1", jb.Name),
		fmt.Sprintf("shared source src: job %s reads it through the reader it shares with %s", jb.Name, ja.Name),
	} {
		if !strings.Contains(se.log.String(), want) {
			t.Errorf("no %q in the log:\n%s", want, se.log.String())
		}
	}

	// A job whose own CAST fails fails alone.
	jc := se.exec(`INSERT INTO c SELECT id, CAST(s AS INT) FROM src;`)
	se.waitShared(6, ja.Name, jb.Name, jc.Name)
	kafkatest.ProduceTo(t, bs, "in", &kgo.Record{Partition: 1, Value: []byte(`{"id":1000,"s":"x"}`)})
	if err := jc.Wait(); err == nil || !strings.Contains(err.Error(), "cannot cast 'x' to INT") {
		t.Fatalf("job c: %v", err)
	}
	se.waitShared(4, ja.Name, jb.Name)
	produceIDs(t, bs, "in", 100, 150)
	se.waitPrinted("a", 151)
	if got := se.waitPrinted("b", 151); !slices.Equal(got, ids(0, 150, 1000)) {
		t.Errorf("b printed %v", got)
	}

	// A job stopped leaves the others reading.
	jb.Stop()
	if err := jb.Wait(); err != nil {
		t.Fatal(err)
	}
	se.waitShared(2, ja.Name)
	produceIDs(t, bs, "in", 150, 200)
	if got := se.waitPrinted("a", 201); !slices.Equal(got, ids(0, 200, 1000)) {
		t.Errorf("a printed %v", got)
	}
	if got := se.printed("b"); len(got) != 151 {
		t.Errorf("b printed %d rows after it stopped, want 151", len(got))
	}

	// Off for the session, or for the table: a reader of its own, from
	// the table's startup position.
	jd := se.exec(`SET 'pipeline.shared-source' = 'false'; INSERT INTO d SELECT id, s FROM src;`)
	if got := se.waitPrinted("d", 201); !slices.Equal(got, ids(0, 200, 1000)) {
		t.Errorf("d printed %v", got)
	}
	je := se.exec(`SET 'pipeline.shared-source' = 'true';
INSERT INTO e SELECT id, s FROM src /*+ OPTIONS('scan.shared-source' = 'false') */;`)
	if got := se.waitPrinted("e", 201); !slices.Equal(got, ids(0, 200, 1000)) {
		t.Errorf("e printed %v", got)
	}
	s := se.waitShared(2, ja.Name)
	// Every record was read once by the shared readers, opened once per
	// partition.
	if s.Opens != 2 || s.Readers != 2 || s.RowsRead != 201 {
		t.Errorf("shared source %+v: want 2 readers opened once, 201 rows read", s)
	}
	for _, j := range []*sluice.Job{ja, jd, je} {
		j.Cancel()
		j.Wait()
	}
	until(t, func() bool { return len(se.SharedSources()) == 0 },
		func() string { return fmt.Sprintf("shared sources left: %+v", se.SharedSources()) })
}

// The switch's values are checked, at SET and in a table's options.
func TestSharedSourceOptionChecked(t *testing.T) {
	se := openShared(t, sluice.Options{}, nil)
	_, err := se.Exec(context.Background(), "test.sql", []byte(`SET 'pipeline.shared-source' = 'sometimes';`))
	if err == nil || !strings.Contains(err.Error(), "pipeline.shared-source must be 'true' or 'false', got 'sometimes'") {
		t.Errorf("SET: %v", err)
	}
	src := `CREATE TABLE g (id BIGINT) WITH ('connector' = 'datagen', 'scan.shared-source' = 'maybe');
CREATE TABLE o (id BIGINT) WITH ('connector' = 'blackhole', 'scan.shared-source' = 'false');
INSERT INTO o SELECT id FROM g;`
	_, err = se.Exec(context.Background(), "test.sql", []byte(src))
	if err == nil || !strings.Contains(sluice.FormatError(err, []byte(src)), "test.sql:1:59: option 'scan.shared-source': expected true or false, got \"maybe\"") {
		t.Errorf("error:\n%v", sluice.FormatError(err, []byte(src)))
	}
}

// countingGen is the datagen connector with its readers and rows
// counted: what the engine reads from the connector itself.
type countingGen struct {
	opens, rows atomic.Int64
}

func (*countingGen) Name() string { return "counting-datagen" }

func (c *countingGen) CreateSource(t connector.Table, env connector.Env) (connector.Source, error) {
	src, err := datagen.New().CreateSource(t, env)
	if err != nil {
		return nil, err
	}
	return &countingGenSource{Source: src, c: c}, nil
}

type countingGenSource struct {
	connector.Source
	c *countingGen
}

// Generates implements connector.Generator, as datagen's source does.
func (s *countingGenSource) Generates() bool { return true }

func (s *countingGenSource) Open(ctx context.Context, p int) (connector.Reader, error) {
	r, err := s.Source.Open(ctx, p)
	if err != nil {
		return nil, err
	}
	s.c.opens.Add(1)
	return &countingGenReader{Reader: r, c: s.c}, nil
}

type countingGenReader struct {
	connector.Reader
	c *countingGen
}

func (r *countingGenReader) Read(ctx context.Context, b *types.Batch, max int) error {
	n := len(b.Rows)
	err := r.Reader.Read(ctx, b, max)
	r.c.rows.Add(int64(len(b.Rows) - n))
	return err
}

// Two jobs over an unbounded generator table, reading different columns
// of it, open its partitions once: the connector counts one reader per
// partition and as many rows as the shared source read; with the switch
// off, each job opens its own.
func TestSharedSourceGenerator(t *testing.T) {
	gen := &countingGen{}
	se := openShared(t, sluice.Options{}, nil)
	if err := se.RegisterConnector(gen); err != nil {
		t.Fatal(err)
	}
	ddl := `CREATE TABLE g (id BIGINT, v INT, w STRING) WITH ('connector' = 'counting-datagen',
  'rows-per-second' = '2000', 'partitions' = '2');
CREATE TABLE o1 (id BIGINT, v INT) WITH ('connector' = 'blackhole');
CREATE TABLE o2 (id BIGINT) WITH ('connector' = 'blackhole');
`
	j1 := se.exec(ddl + `INSERT INTO o1 SELECT id, v FROM g;`)
	j2 := se.exec(`INSERT INTO o2 SELECT id FROM g WHERE id > 0;`)
	s := se.waitShared(4, j1.Name, j2.Name)
	if s.Opens != 2 || gen.opens.Load() != 2 {
		t.Errorf("%d readers opened by the shared source, %d by the connector; want 2 (one per partition)", s.Opens, gen.opens.Load())
	}
	until(t, func() bool { return j2.Metrics.RowsIn.Load() > 1000 }, func() string { return "job 2 reads nothing" })
	j1.Cancel()
	j2.Cancel()
	j1.Wait()
	j2.Wait()
	if s := se.SharedSources(); len(s) != 0 {
		t.Errorf("shared sources left after the jobs ended: %+v", s)
	}
	// Each job received the rows it read; the connector made them once:
	// readers of their own would have made as many as they received.
	if n1, n2, made := j1.Metrics.RowsIn.Load(), j2.Metrics.RowsIn.Load(), gen.rows.Load(); n1+n2 <= made || n1 > made || n2 > made {
		t.Errorf("the jobs read %d and %d rows, the connector generated %d", n1, n2, made)
	}

	// Off: a reader per job and partition.
	before := gen.opens.Load()
	j3 := se.exec(`SET 'pipeline.shared-source' = 'false'; INSERT INTO o1 SELECT id, v FROM g;`)
	j4 := se.exec(`INSERT INTO o2 SELECT id FROM g;`)
	until(t, func() bool { return gen.opens.Load()-before == 4 },
		func() string { return fmt.Sprintf("%d readers opened, want 4", gen.opens.Load()-before) })
	if s := se.SharedSources(); len(s) != 0 {
		t.Errorf("shared sources with the switch off: %+v", s)
	}
	j3.Cancel()
	j4.Cancel()
	j3.Wait()
	j4.Wait()
}

// visibleIDs returns the ids (sorted) of the rows a filesystem sink made
// visible in dir: its part files, not the hidden in-progress ones.
func visibleIDs(t *testing.T, dir string) []int {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []int
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") || e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if l == "" {
				continue
			}
			var row struct{ ID int }
			if err := json.Unmarshal([]byte(l), &row); err != nil {
				t.Fatalf("%s: %q: %v", e.Name(), l, err)
			}
			out = append(out, row.ID)
		}
	}
	slices.Sort(out)
	return out
}

// Jobs that resume from a state.dir: a job whose checkpoint is behind
// the shared reader reads on its own (and the log says so); a job that
// the reader has not passed attaches to it. Either way each job's
// committed output holds every row once, as the job run on its own
// writes it.
func TestSharedSourceResume(t *testing.T) {
	for _, order := range []string{"behind second", "behind first"} {
		t.Run(order, func(t *testing.T) {
			bs := kafkatest.Start(t, 2, "in")
			dir := t.TempDir()
			vars := map[string]string{"$BS": bs, "$DIR": dir}
			ddl := `
SET 'state.dir' = '$DIR/state';
SET 'execution.checkpointing.interval' = '20ms';
CREATE TABLE src (id BIGINT) WITH ('connector' = 'kafka', 'topic' = 'in',
  'properties.bootstrap.servers' = '$BS', 'scan.startup.mode' = 'earliest-offset', 'format' = 'json');
CREATE TABLE outa (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '$DIR/a/', 'format' = 'json',
  'sink.rolling-policy.rollover-interval' = '10ms');
CREATE TABLE outr (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '$DIR/r/', 'format' = 'json',
  'sink.rolling-policy.rollover-interval' = '10ms');
`
			startA := `SET 'pipeline.name' = 'a'; INSERT INTO outa SELECT id FROM src;`
			startR := `SET 'pipeline.name' = 'r'; INSERT INTO outr SELECT id FROM src;`
			waitIDs := func(sink string, n int) {
				until(t, func() bool { return len(visibleIDs(t, filepath.Join(dir, sink))) >= n },
					func() string {
						var names []string
						filepath.Walk(dir, func(p string, _ os.FileInfo, _ error) error { names = append(names, p); return nil })
						return fmt.Sprintf("%s holds %d rows, want %d; files %v", sink, len(visibleIDs(t, filepath.Join(dir, sink))), n, names)
					})
			}
			stop := func(j *sluice.Job) {
				j.Stop()
				if err := j.Wait(); err != nil {
					t.Fatal(err)
				}
			}

			// First run: r stops after 100 rows, a after 200.
			e1 := openShared(t, sluice.Options{}, vars)
			e1.exec(ddl)
			a, r := e1.exec(startA), e1.exec(startR)
			e1.waitShared(4, "a", "r")
			produceIDs(t, bs, "in", 0, 100)
			waitIDs("a", 100)
			waitIDs("r", 100)
			stop(r)
			produceIDs(t, bs, "in", 100, 200)
			waitIDs("a", 200)
			stop(a)
			e1.Close()

			// Second run: r resumes behind a.
			e2 := openShared(t, sluice.Options{}, vars)
			e2.exec(ddl)
			if order == "behind second" {
				a = e2.exec(startA)
				e2.waitShared(2, "a")
				r = e2.exec(startR)
				resumed := regexp.MustCompile(`shared source src: job r reads partition \d on its own, from after offset \d+, until it reaches the shared reader`)
				until(t, func() bool { return len(resumed.FindAllString(e2.log.String(), -1)) == 2 },
					func() string { return "no line for each partition of r in the log:\n" + e2.log.String() })
				// r reads on its own what a read while it was stopped,
				// and then through the shared reader.
				e2.waitShared(4, "a", "r")
			} else {
				r = e2.exec(startR)
				e2.waitShared(2, "r")
				a = e2.exec(startA)
				e2.waitShared(4, "a", "r")
			}
			produceIDs(t, bs, "in", 200, 300)
			waitIDs("a", 300)
			waitIDs("r", 300)
			stop(a)
			stop(r)
			for _, sink := range []string{"a", "r"} {
				if got := visibleIDs(t, filepath.Join(dir, sink)); !slices.Equal(got, ids(0, 300)) {
					t.Errorf("%s: wrote %d rows, want every id of 0..299 once: %v", sink, len(got), got)
				}
			}
		})
	}
}

// A job that reads a changelog (an upsert-kafka table) needs all of it:
// started after the shared reader has handed out rows, it reads on its
// own from the start until it has caught up, and its view of the table is
// whole: every key, and an update retracts the row it had.
func TestSharedSourceChangelogWhole(t *testing.T) {
	bs := kafkatest.Start(t, 2, "prices")
	se := openShared(t, sluice.Options{}, map[string]string{"$BS": bs})
	rec := func(k string, v int) *kgo.Record {
		return &kgo.Record{Key: fmt.Appendf(nil, `{"k":"%s"}`, k), Value: fmt.Appendf(nil, `{"k":"%s","v":%d}`, k, v), Partition: int32(len(k) % 2)}
	}
	se.exec(`
CREATE TABLE prices (k STRING, v INT, PRIMARY KEY (k) NOT ENFORCED) WITH (
  'connector' = 'upsert-kafka', 'topic' = 'prices', 'properties.bootstrap.servers' = '$BS',
  'key.format' = 'json', 'value.format' = 'json');
CREATE TABLE pa (k STRING, v INT) WITH ('connector' = 'print', 'print-identifier' = 'pa');
CREATE TABLE pb (k STRING, v INT) WITH ('connector' = 'print', 'print-identifier' = 'pb');`)
	ja := se.exec(`INSERT INTO pa SELECT k, v FROM prices;`)
	var recs []*kgo.Record
	for i := range 10 {
		recs = append(recs, rec(strings.Repeat("k", i%2+1)+fmt.Sprint(i), i))
	}
	kafkatest.ProduceTo(t, bs, "prices", recs...)
	lines := func(prefix string) []string {
		var out []string
		for _, l := range strings.Split(se.out.String(), "\n") {
			if strings.HasPrefix(l, prefix) {
				out = append(out, l)
			}
		}
		slices.Sort(out)
		return out
	}
	until(t, func() bool { return len(lines("pa> +I")) == 10 }, func() string { return se.out.String() })
	jb := se.exec(`INSERT INTO pb SELECT k, v FROM prices;`)
	until(t, func() bool { return len(lines("pb> +I")) == 10 }, func() string { return "pb:\n" + strings.Join(lines("pb>"), "\n") })
	kafkatest.ProduceTo(t, bs, "prices", rec("k0", 100))
	for _, p := range []string{"pa", "pb"} {
		until(t, func() bool { return len(lines(p+"> +U")) == 1 }, func() string { return se.out.String() })
		if got := strings.Join(lines(p+"> -U"), " ") + " " + strings.Join(lines(p+"> +U"), " "); got != p+"> -U[k0, 0] "+p+"> +U[k0, 100]" {
			t.Errorf("%s: the update printed %s", p, got)
		}
	}
	if !strings.Contains(se.log.String(), "job "+jb.Name+" reads partition 0 on its own, from the table's startup position") {
		t.Errorf("log:\n%s", se.log.String())
	}
	se.waitShared(4, ja.Name, jb.Name)
}

// A job started while another reads a generator table attaches at the
// shared reader's position: it gets the rows generated after it attached,
// the same rows the other job gets (a generator has no history to catch
// up with).
func TestSharedSourceGeneratorAttach(t *testing.T) {
	se := openShared(t, sluice.Options{}, nil)
	se.exec(`CREATE TABLE g (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '500', 'seed' = '7');
CREATE TABLE ga (id BIGINT, x INT) WITH ('connector' = 'print', 'print-identifier' = 'ga');
CREATE TABLE gb (id BIGINT, x INT) WITH ('connector' = 'print', 'print-identifier' = 'gb');`)
	ja := se.exec(`INSERT INTO ga SELECT id, 0 FROM g;`)
	se.waitPrinted("ga", 100)
	jb := se.exec(`INSERT INTO gb SELECT id, 0 FROM g;`)
	se.waitShared(2, ja.Name, jb.Name)
	se.waitPrinted("gb", 100)
	jb.Stop()
	if err := jb.Wait(); err != nil {
		t.Fatal(err)
	}
	b := se.printed("gb")
	until(t, func() bool { return slices.Contains(se.printed("ga"), b[len(b)-1]) }, func() string { return "ga did not print gb's last row" })
	a := se.printed("ga")
	k := slices.Index(a, b[0])
	if k < 100 || !slices.Equal(a[k:k+len(b)], b) {
		t.Errorf("gb printed %d rows that are not ga's from its %dth on:\nga %v\ngb %v", len(b), k, a, b)
	}
	ja.Cancel()
	ja.Wait()
}
