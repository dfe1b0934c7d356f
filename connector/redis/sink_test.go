package redis

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/types"
)

func openSink(t *testing.T, s types.Schema, pk []string, opts connector.Options) *Sink {
	t.Helper()
	sk, err := New().CreateSink(connector.Table{Name: "dim", Schema: s, PrimaryKey: pk, Options: opts}, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sk.Close() })
	return sk.(*Sink)
}

func write(t *testing.T, s *Sink, rows ...types.Row) {
	t.Helper()
	b := types.NewBatch(len(rows), s.schema.Len())
	for _, r := range rows {
		b.Append(r)
	}
	if err := s.Write(context.Background(), b); err != nil {
		t.Fatal(err)
	}
}

func row(kind types.RowKind, vals ...types.Value) types.Row {
	return types.Row{Kind: kind, Origin: types.NoOrigin, Vals: vals}
}

func ts(t *testing.T, s string) types.Value {
	us, err := types.ParseTimestamp(s)
	if err != nil {
		t.Fatal(err)
	}
	return types.TimestampValue(us)
}

// TestSinkHash writes hashes by a composite key, updates, NULLs and a
// delete, and reads them back with a lookup of the same table.
func TestSinkHash(t *testing.T) {
	mr := miniredis.RunT(t)
	opts := connector.Options{"connector": "redis", "url": "redis://" + mr.Addr(), "key-prefix": "t:", "key-separator": "/",
		"sink.buffer-flush.max-rows": "0", "sink.buffer-flush.interval": "0"}
	pk := []string{"tenant", "id"}
	s := openSink(t, schema, pk, opts)
	write(t, s,
		row(types.Insert, types.StringValue("acme"), types.BigIntValue(1), types.StringValue("one"), types.DecimalValue(150, 2), ts(t, "2024-05-06 07:08:09.123")),
		row(types.Insert, types.StringValue("acme"), types.BigIntValue(2), types.StringValue("two"), types.DecimalValue(-5, 2), types.NullValue),
		row(types.Insert, types.StringValue("acme"), types.BigIntValue(3), types.StringValue("three"), types.NullValue, types.NullValue),
	)
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := mr.HGet("t:acme/1", "score"); got != "1.50" {
		t.Errorf("score field %q", got)
	}
	if got := mr.HGet("t:acme/1", "seen"); got != "2024-05-06 07:08:09.123" {
		t.Errorf("seen field %q", got)
	}
	if fields, _ := mr.HKeys("t:acme/3"); strings.Join(fields, ",") != "id,name,tenant" {
		t.Errorf("fields of a row with NULLs: %v", fields)
	}
	// An update sets a column to NULL (its field goes) and another one;
	// -U rows are skipped; a delete removes the key.
	write(t, s,
		row(types.UpdateBefore, types.StringValue("acme"), types.BigIntValue(1), types.StringValue("one"), types.DecimalValue(150, 2), types.NullValue),
		row(types.UpdateAfter, types.StringValue("acme"), types.BigIntValue(1), types.StringValue("uno"), types.NullValue, ts(t, "2024-05-06 07:08:09.123")),
		row(types.Delete, types.StringValue("acme"), types.BigIntValue(2), types.NullValue, types.NullValue, types.NullValue),
	)
	if err := s.Close(); err != nil { // Close writes what is buffered
		t.Fatal(err)
	}
	if mr.Exists("t:acme/2") {
		t.Error("a deleted row's key is there")
	}
	l := open(t, schema, pk, opts, env(nil))
	key := func(id int64) []types.Value { return []types.Value{types.StringValue("acme"), types.BigIntValue(id)} }
	for id, want := range map[int64]string{
		1: "acme|1|uno|NULL|2024-05-06 07:08:09.123",
		2: "",
		3: "acme|3|three|NULL|NULL",
	} {
		if got := lookup(t, l, []int{0, 1}, key(id)...); got != want {
			t.Errorf("key %d: %q, want %q", id, got, want)
		}
	}
}

// TestSinkString writes JSON values and plain values.
func TestSinkString(t *testing.T) {
	mr := miniredis.RunT(t)
	s := openSink(t, schema, []string{"tenant", "id"}, connector.Options{"connector": "redis", "url": "redis://" + mr.Addr(),
		"data-type": "string", "format": "json", "sink.buffer-flush.max-rows": "2"})
	write(t, s,
		row(types.Insert, types.StringValue("a"), types.BigIntValue(1), types.StringValue("x"), types.DecimalValue(100, 2), types.NullValue),
		row(types.Insert, types.StringValue("a"), types.BigIntValue(2), types.StringValue("y"), types.NullValue, ts(t, "2020-01-01 00:00:00")),
	) // the second row fills the buffer: written
	if got, _ := mr.Get("a:1"); got != `{"tenant":"a","id":1,"name":"x","score":1.00,"seen":null}` {
		t.Errorf("a:1 = %s", got)
	}
	l := open(t, schema, []string{"tenant", "id"}, connector.Options{"connector": "redis", "url": "redis://" + mr.Addr(),
		"data-type": "string", "format": "json"}, env(nil))
	if got := lookup(t, l, []int{0, 1}, types.StringValue("a"), types.BigIntValue(2)); got != "a|2|y|NULL|2020-01-01 00:00:00.000" {
		t.Errorf("looked up %q", got)
	}

	rates := types.NewSchema(types.Column{Name: "cur", Type: types.String}, types.Column{Name: "rate", Type: types.Decimal(10, 4)},
		types.Column{Name: "raw", Type: types.Bytes}) // raw: a second value column
	if _, err := New().CreateSink(connector.Table{Name: "r", Schema: rates, PrimaryKey: []string{"cur"},
		Options: connector.Options{"connector": "redis", "url": "redis://" + mr.Addr(), "data-type": "string"}}, env(nil)); err == nil ||
		!strings.Contains(err.Error(), "exactly one other column") {
		t.Errorf("two value columns: %v", err)
	}
	rates.Columns = rates.Columns[:2]
	r := openSink(t, rates, []string{"cur"}, connector.Options{"connector": "redis", "url": "redis://" + mr.Addr(),
		"data-type": "string", "key-prefix": "rate:", "sink.ttl": "1 h"})
	write(t, r,
		row(types.Insert, types.StringValue("EUR"), types.DecimalValue(10825, 4)),
		row(types.Insert, types.StringValue("USD"), types.DecimalValue(1, 0)),
	)
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, _ := mr.Get("rate:EUR"); got != "1.0825" {
		t.Errorf("rate:EUR = %q", got)
	}
	if ttl := mr.TTL("rate:USD"); ttl != time.Hour {
		t.Errorf("ttl %v", ttl)
	}
	// A NULL value has no string: the key goes.
	write(t, r, row(types.UpdateAfter, types.StringValue("USD"), types.NullValue))
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if mr.Exists("rate:USD") {
		t.Error("a NULL value left its key")
	}
}

// TestSinkTTL: every write of a hash sets its time to live again.
func TestSinkTTL(t *testing.T) {
	mr := miniredis.RunT(t)
	s := openSink(t, schema, []string{"tenant", "id"}, connector.Options{"connector": "redis", "url": "redis://" + mr.Addr(),
		"sink.ttl": "10 s", "sink.buffer-flush.max-rows": "1"})
	r := row(types.Insert, types.StringValue("a"), types.BigIntValue(1), types.StringValue("x"), types.NullValue, types.NullValue)
	write(t, s, r)
	mr.FastForward(8 * time.Second)
	write(t, s, r)
	mr.FastForward(8 * time.Second)
	if !mr.Exists("a:1") {
		t.Fatal("the key expired 10 s after its first write, not its last")
	}
	mr.FastForward(3 * time.Second)
	if mr.Exists("a:1") {
		t.Fatal("the key did not expire")
	}
}

func TestSinkInterval(t *testing.T) {
	mr := miniredis.RunT(t)
	s := openSink(t, schema, []string{"tenant", "id"}, connector.Options{"connector": "redis", "url": "redis://" + mr.Addr(),
		"sink.buffer-flush.interval": "10ms"})
	write(t, s, row(types.Insert, types.StringValue("a"), types.BigIntValue(1), types.StringValue("x"), types.NullValue, types.NullValue))
	deadline := time.Now().Add(10 * time.Second)
	for mr.HGet("a:1", "name") != "x" {
		if time.Now().After(deadline) {
			t.Fatal("the interval never wrote the row")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestSinkServerDown: a write while the server is away is tried again,
// and lands once the server is back.
func TestSinkServerDown(t *testing.T) {
	mr := miniredis.RunT(t)
	retrying := make(chan string, 10)
	e := env(nil)
	e.Logf = func(f string, a ...any) {
		select {
		case retrying <- fmt.Sprintf(f, a...):
		default:
		}
	}
	sk, err := New().CreateSink(connector.Table{Name: "dim", Schema: schema, PrimaryKey: []string{"tenant", "id"},
		Options: connector.Options{"connector": "redis", "url": "redis://" + mr.Addr(), "sink.max-retries": "5", "timeout": "200ms",
			"sink.buffer-flush.interval": "0"}}, e)
	if err != nil {
		t.Fatal(err)
	}
	s := sk.(*Sink)
	defer s.Close()
	write(t, s, row(types.Insert, types.StringValue("a"), types.BigIntValue(1), types.StringValue("x"), types.NullValue, types.NullValue))
	mr.Close()
	done := make(chan error, 1)
	go func() { done <- s.Flush(context.Background()) }()
	// The first try fails and says so; the retry comes a second later.
	select {
	case line := <-retrying:
		if !strings.Contains(line, "redis table 'dim': cannot write 1 changes") || !strings.Contains(line, "retry 1 of 5 in 1s") {
			t.Errorf("logged %q", line)
		}
	case err := <-done:
		t.Fatalf("the flush ended without a retry: %v", err)
	}
	if err := mr.Restart(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the write was not retried once the server was back: %v", err)
	}
	if mr.HGet("a:1", "name") != "x" {
		t.Fatal("the row is not there")
	}
	if _, retries := s.Stats(); retries == 0 {
		t.Errorf("%d retries", retries)
	}
}

// TestSinkWrongType: a key that holds another type fails the write at
// once, naming the key.
func TestSinkWrongType(t *testing.T) {
	mr := miniredis.RunT(t)
	mr.Set("a:1", "a string")
	s := openSink(t, schema, []string{"tenant", "id"}, connector.Options{"connector": "redis", "url": "redis://" + mr.Addr(), "sink.max-retries": "5"})
	write(t, s, row(types.Insert, types.StringValue("a"), types.BigIntValue(1), types.StringValue("x"), types.NullValue, types.NullValue))
	start := time.Now()
	err := s.Flush(context.Background())
	if err == nil || !strings.Contains(err.Error(), "redis table 'dim': HSET a:1: WRONGTYPE") {
		t.Fatalf("error %v", err)
	}
	if _, retries := s.Stats(); retries > 0 || time.Since(start) > 900*time.Millisecond {
		t.Errorf("retried %d times", retries)
	}
}

func TestSinkOptions(t *testing.T) {
	base := connector.Options{"connector": "redis", "host": "127.0.0.1"}
	for _, c := range []struct {
		opts connector.Options
		pk   []string
		s    types.Schema
		want string
	}{
		{nil, nil, schema, "needs a PRIMARY KEY"},
		{connector.Options{"sink.ttl": "0.5 ms"}, []string{"id"}, schema, "'sink.ttl' must be at least 1 ms"},
		{connector.Options{"sink.max-retries": "-1"}, []string{"id"}, schema, "'sink.max-retries' must be between 0 and 1000"},
		{connector.Options{"sink.buffer-flush.interval": "x"}, []string{"id"}, schema, "option 'sink.buffer-flush.interval'"},
		{connector.Options{"sink.tll": "1 s"}, []string{"id"}, schema, "unsupported option 'sink.tll'"},
		{connector.Options{"sink.delivery-guarantee": "none"}, []string{"id"}, schema, "'sink.delivery-guarantee': unsupported value 'none'"},
		{nil, []string{"id"}, types.NewSchema(types.Column{Name: "id", Type: types.Int}, types.Column{Name: "a", Type: types.ArrayOf(types.Int)}),
			"column 'a': the redis sink cannot write values of type ARRAY<INT> without a 'format'"},
	} {
		o := connector.Options{}
		for k, v := range base {
			o[k] = v
		}
		for k, v := range c.opts {
			o[k] = v
		}
		_, err := New().CreateSink(connector.Table{Name: "d", Schema: c.s, PrimaryKey: c.pk, Options: o}, env(nil))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.opts, err, c.want)
		}
	}
	// The sink's options are the lookup's too: one table, both uses.
	o := connector.Options{"connector": "redis", "host": "127.0.0.1", "sink.ttl": "1 min", "lookup.cache": "PARTIAL", "lookup.partial-cache.max-rows": "10"}
	tbl := connector.Table{Name: "d", Schema: schema, PrimaryKey: []string{"tenant", "id"}, Options: o}
	if s, err := New().CreateSink(tbl, env(nil)); err != nil {
		t.Error(err)
	} else {
		s.Close()
	}
	if l, err := New().CreateLookup(tbl, env(nil)); err != nil {
		t.Error(err)
	} else {
		l.Close()
	}
	if !New().AcceptsChangelog(tbl, env(nil)) {
		t.Error("a table with a primary key does not take updates")
	}
}

// TestSinkExactlyOnce: in a job that takes checkpoints, the sink writes
// what a checkpoint sealed once it is complete, and a restarted sink
// writes the sealed changes of its last checkpoint first.
func TestSinkExactlyOnce(t *testing.T) {
	mr := miniredis.RunT(t)
	ctx := context.Background()
	opts := connector.Options{"connector": "redis", "url": "redis://" + mr.Addr(), "sink.buffer-flush.max-rows": "1", "sink.buffer-flush.interval": "1ms"}
	s := openSink(t, schema, []string{"tenant", "id"}, opts)
	if err := s.Restore(ctx, connector.SinkRestore{Owner: "job", Checkpointed: true}); err != nil {
		t.Fatal(err)
	}
	if !s.ExactlyOnce() {
		t.Fatal("a checkpointed sink is not exactly-once")
	}
	if id := s.Identity(); id != "redis|"+mr.Addr()+"|0|" {
		t.Errorf("identity %q", id)
	}
	r := func(id int64, name string) types.Row {
		return row(types.Insert, types.StringValue("a"), types.BigIntValue(id), types.StringValue(name), types.NullValue, types.NullValue)
	}
	write(t, s, r(1, "one"), r(2, "two"))
	time.Sleep(5 * time.Millisecond) // neither max-rows nor the interval writes
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if len(mr.Keys()) != 0 {
		t.Fatalf("written before a checkpoint completed: %v", mr.Keys())
	}
	if err := s.Prepare(ctx); err != nil { // the barrier
		t.Fatal(err)
	}
	write(t, s, r(3, "three")) // after the barrier
	snap, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx); err != nil { // the checkpoint completed
		t.Fatal(err)
	}
	if got := strings.Join(mr.Keys(), " "); got != "a:1 a:2" {
		t.Fatalf("keys after the commit: %s", got)
	}
	// The key written after the barrier goes with the sink (a crash);
	// the job's next run replays it. A crash between the checkpoint and
	// its commit is repaired by the next run's restore.
	s.Close()
	mr.FlushAll()
	s2 := openSink(t, schema, []string{"tenant", "id"}, opts)
	if err := s2.Restore(ctx, connector.SinkRestore{Owner: "job", Snapshot: snap, Checkpointed: true}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(mr.Keys(), " "); got != "a:1 a:2" {
		t.Fatalf("keys after the restore: %s", got)
	}
	// At least once, in the same job: written as the buffer fills.
	o := connector.Options{"sink.delivery-guarantee": "at-least-once"}
	for k, v := range opts {
		o[k] = v
	}
	s3 := openSink(t, schema, []string{"tenant", "id"}, o)
	if err := s3.Restore(ctx, connector.SinkRestore{Owner: "job", Checkpointed: true}); err != nil {
		t.Fatal(err)
	}
	write(t, s3, r(9, "nine"))
	if s3.ExactlyOnce() || mr.HGet("a:9", "name") != "nine" {
		t.Fatal("an at-least-once sink did not write when its buffer filled")
	}
}

// TestSinkTypes writes a value of every kind as hash fields and reads it
// back through a lookup of the same table.
func TestSinkTypes(t *testing.T) {
	mr := miniredis.RunT(t)
	s := types.NewSchema(
		types.Column{Name: "id", Type: types.Int},
		types.Column{Name: "b", Type: types.Boolean},
		types.Column{Name: "dec", Type: types.Decimal(10, 3)},
		types.Column{Name: "f", Type: types.Float},
		types.Column{Name: "d", Type: types.Double},
		types.Column{Name: "day", Type: types.Date},
		types.Column{Name: "tm", Type: types.Time(3)},
		types.Column{Name: "ts", Type: types.Timestamp(6)},
		types.Column{Name: "ltz", Type: types.TimestampLTZ(3)},
		types.Column{Name: "bin", Type: types.Bytes},
		types.Column{Name: "s", Type: types.String},
		types.Column{Name: "big", Type: types.BigInt},
	)
	opts := connector.Options{"connector": "redis", "url": "redis://" + mr.Addr(), "key-prefix": "ty:"}
	sk := openSink(t, s, []string{"id"}, opts)
	tsv := ts(t, "1969-07-20 20:17:40.123456")
	b := types.NewBatch(2, s.Len())
	copy(b.AddRow(types.Insert, types.NoOrigin, s.Len()), []types.Value{types.Int32Value(1), types.BoolValue(true),
		types.DecimalValue(-12345, 3), types.FloatValue(0.1), types.DoubleValue(1e-7), types.DateValue(types.DateFromCivil(2024, 2, 29)),
		types.TimeValue(45_296_789_000), tsv, types.TimestampLTZValue(1_704_103_200_500_000), types.BytesValue([]byte{0, 0xff, '\n'}),
		types.StringValue("żółw\n\"q\""), types.BigIntValue(-1 << 63)})
	b.AddRow(types.Insert, types.NoOrigin, s.Len())[0] = types.Int32Value(2) // NULLs
	if err := sk.Write(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	if err := sk.Close(); err != nil {
		t.Fatal(err)
	}
	if got := mr.HGet("ty:1", "bin"); got != "\x00\xff\n" {
		t.Errorf("BYTES field %q", got)
	}
	l := open(t, s, []string{"id"}, opts, env(nil))
	for id, want := range map[int32]string{
		1: `1|TRUE|-12.345|0.1|1.0E-7|2024-02-29|12:34:56.789|1969-07-20 20:17:40.123456|2024-01-01 10:00:00.500|x'00ff0a'|żółw
"q"|-9223372036854775808`,
		2: "2|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL",
	} {
		if got := lookup(t, l, []int{0}, types.Int32Value(id)); got != want {
			t.Errorf("id %d:\n got %s\nwant %s", id, got, want)
		}
	}
}
