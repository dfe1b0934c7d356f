package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/connector/lookupcache"
	"github.com/sluicesql/sluice/connector/redact"
	"github.com/sluicesql/sluice/connector/sinkbuf"
	"github.com/sluicesql/sluice/internal/resp"
	"github.com/sluicesql/sluice/types"
)

// Sink option keys, with the names of the JDBC sink's where they mean the
// same.
const (
	optTTL           = "sink.ttl"
	optFlushRows     = "sink.buffer-flush.max-rows"
	optFlushInterval = "sink.buffer-flush.interval"
	optMaxRetries    = "sink.max-retries"
	optParallelism   = "sink.parallelism"
	optGuarantee     = "sink.delivery-guarantee"
)

var sinkOptions = []string{optTTL, optFlushRows, optFlushInterval, optMaxRetries, optParallelism, optGuarantee}

// sinkSettings are the sink's options.
type sinkSettings struct {
	ttl        time.Duration // 'sink.ttl' (0: keys do not expire)
	maxRows    int           // 'sink.buffer-flush.max-rows' (100; 0: no limit)
	interval   time.Duration // 'sink.buffer-flush.interval' (1 s; 0: none)
	maxRetries int           // 'sink.max-retries' (3)
	// 'sink.delivery-guarantee': in a job that takes checkpoints, write
	// only what completed checkpoints cover (the default), or write as
	// the buffer fills and count on idempotence.
	exactlyOnce bool
}

func parseSinkOptions(o connector.Options) (sinkSettings, error) {
	var s sinkSettings
	var err error
	switch g := strings.ToLower(o.String(optGuarantee, "exactly-once")); g {
	case "exactly-once":
		s.exactlyOnce = true
	case "at-least-once":
	default:
		return s, fmt.Errorf("option '%s': unsupported value '%s' (expected 'exactly-once' or 'at-least-once')", optGuarantee, g)
	}
	if s.ttl, err = o.Duration(optTTL, 0); err != nil {
		return s, err
	}
	if s.ttl < 0 || s.ttl > 0 && s.ttl < time.Millisecond {
		return s, fmt.Errorf("option '%s' must be at least 1 ms (or 0: keys do not expire)", optTTL)
	}
	n, err := o.Int(optFlushRows, 100)
	if err != nil {
		return s, err
	}
	if n < 0 || n > 1<<30 {
		return s, fmt.Errorf("option '%s' must be 0 (no limit) or a number of rows, not %d", optFlushRows, n)
	}
	s.maxRows = int(n)
	if s.interval, err = o.Duration(optFlushInterval, time.Second); err != nil {
		return s, err
	}
	if s.interval < 0 {
		return s, fmt.Errorf("option '%s' must not be negative", optFlushInterval)
	}
	if n, err = o.Int(optMaxRetries, 3); err != nil {
		return s, err
	}
	if n < 0 || n > 1000 {
		return s, fmt.Errorf("option '%s' must be between 0 and 1000, not %d", optMaxRetries, n)
	}
	s.maxRetries = int(n)
	// Accepted for Flink compatibility: a sink is one writer.
	if n, err = o.Int(optParallelism, 1); err != nil {
		return s, err
	}
	if n < 1 {
		return s, fmt.Errorf("option '%s' must be at least 1, not %d", optParallelism, n)
	}
	return s, nil
}

// retryBackoff is the wait before a sink's first retry; retry n waits n
// times as long.
const retryBackoff = time.Second

// maxPipeline is the most keys one MULTI/EXEC writes.
const maxPipeline = 512

// AcceptsChangelog implements connector.ChangelogSink: a redis table
// (which has a PRIMARY KEY, its Redis key) takes updates and deletes.
func (Factory) AcceptsChangelog(t connector.Table, _ connector.Env) bool {
	return len(t.PrimaryKey) > 0
}

// CreateSink implements connector.SinkFactory. Nothing connects before
// the first write; its errors quote no password.
func (Factory) CreateSink(t connector.Table, env connector.Env) (connector.Sink, error) {
	s, err := newSink(t, env)
	if err != nil {
		return nil, redact.Error(err, redact.Secrets(t.Options)...)
	}
	return s, nil
}

// Sink writes rows to Redis under the keys a lookup of the same table
// reads (a connector.Sink): +I and +U rows set their key, -D rows delete
// it, -U rows are skipped (the +U that follows replaces the value). A
// hash gets a field for every column that is not NULL (HSET) and loses
// the fields of the NULL ones (HDEL); a string is SET to the row encoded
// with the table's format, or to the text of its one value column (a NULL
// value deletes the key). With 'sink.ttl' every key written expires that
// long after its last write. Changes are buffered and reduced by key
// (sinkbuf); each batch goes out in MULTI/EXEC transactions of up to
// maxPipeline keys, one round trip each.
//
// Exactly-once (the default), in a job that takes checkpoints, the sink
// writes at commits only, as the jdbc sink does: what it got between two
// checkpoint barriers is sealed into the checkpoint and written once the
// checkpoint is complete, and a restarted job writes its last
// checkpoint's sealed changes again before anything else. At least once
// ('sink.delivery-guarantee'), it writes when its buffer holds
// 'sink.buffer-flush.max-rows' changes, every 'sink.buffer-flush.interval'
// and at every checkpoint.
type Sink struct {
	*layout
	client   *resp.Client
	db       int // the database number
	settings sinkSettings
	buf      *sinkbuf.Buffer
	keyBuf   []byte
	types    []types.Type // the columns', for the snapshot
	log      func(format string, args ...any)

	// Touched by write only, which the buffer runs under its lock.
	enc  format.Encoder
	text []byte
	cmds [][]string
}

func newSink(t connector.Table, env connector.Env) (*Sink, error) {
	lay, err := parseLayout(t, env)
	if err != nil {
		return nil, err
	}
	if len(lay.pk) == 0 {
		return nil, fmt.Errorf("redis: a table written by the redis sink needs a PRIMARY KEY: its columns make each row's Redis key")
	}
	if _, err := lookupcache.ParseOptions(t.Options); err != nil {
		return nil, err
	}
	s := &Sink{layout: lay, log: env.Log}
	for _, c := range t.Schema.Columns {
		s.types = append(s.types, c.Type)
	}
	if s.settings, err = parseSinkOptions(t.Options); err != nil {
		return nil, err
	}
	for _, c := range t.Schema.Columns {
		if k := c.Type.Kind; k < types.KindBoolean || k > types.KindTimestampLTZ {
			if lay.format == nil {
				return nil, fmt.Errorf("redis: column '%s': the redis sink cannot write values of type %s without a 'format'", c.Name, c.Type)
			}
		}
	}
	if lay.format != nil {
		if s.enc, err = lay.format.NewEncoder(t.Schema, lay.fmtOpts); err != nil {
			return nil, err
		}
	}
	opts, err := clientOptions(t.Options)
	if err != nil {
		return nil, err
	}
	s.client, s.db = resp.New(*opts), opts.DB
	secrets := redact.Secrets(t.Options)
	s.buf = sinkbuf.New(true, sinkbuf.Options{
		MaxRows: s.settings.maxRows, Interval: s.settings.interval, MaxRetries: s.settings.maxRetries,
		Backoff: retryBackoff, What: fmt.Sprintf("redis table '%s'", t.Name), Log: env.Logf,
	}, func(ctx context.Context, batch []sinkbuf.Change) error {
		return redact.Error(s.write(ctx, batch), secrets...)
	})
	return s, nil
}

// Write implements connector.Sink.
func (s *Sink) Write(ctx context.Context, b *types.Batch) error {
	for i := range b.Rows {
		r := &b.Rows[i]
		if r.Kind == types.UpdateBefore {
			continue // the +U that follows replaces the value
		}
		for _, k := range s.pk {
			if r.Vals[k].IsNull() {
				return fmt.Errorf("redis table '%s': primary key column '%s' is NULL in a %s row", s.name, s.schema.Columns[k].Name, r.Kind)
			}
		}
		s.keyBuf = s.key(s.keyBuf[:0], r.Vals)
		if err := s.buf.Add(ctx, s.keyBuf, r.Vals, r.Kind == types.Delete); err != nil {
			return err
		}
	}
	return nil
}

// key appends a row's key, its primary key values, to dst.
func (s *Sink) key(dst []byte, vals []types.Value) []byte {
	for _, k := range s.pk {
		dst = types.AppendKey(dst, vals[k])
	}
	return dst
}

// Restore implements connector.StatefulSink: an exactly-once sink in a
// job that takes checkpoints writes at commits only, and first writes
// what the last checkpoint sealed.
func (s *Sink) Restore(ctx context.Context, r connector.SinkRestore) error {
	if s.settings.exactlyOnce && r.Checkpointed {
		s.buf.Hold()
	} else if r.Checkpointed {
		// Every durable sink says when it is not exactly-once.
		s.log("redis table '%s' is at-least-once: after a failure, what it wrote since the job's last checkpoint is written again", s.name)
	}
	return s.buf.Restore(ctx, r.Snapshot, s.types, s.key)
}

// Prepare implements connector.Committer: at a checkpoint barrier (and at
// the end of input), an exactly-once sink seals what it got for the
// commit; one at least once writes it.
func (s *Sink) Prepare(ctx context.Context) error {
	if s.buf.Held() {
		return s.buf.Seal()
	}
	return s.buf.Flush(ctx)
}

// Commit implements connector.Committer: what was sealed is written once
// the checkpoint that holds it is complete.
func (s *Sink) Commit(ctx context.Context) error { return s.buf.Commit(ctx) }

// Snapshot implements connector.StatefulSink: the sealed changes not yet
// written.
func (s *Sink) Snapshot() ([]byte, error) { return s.buf.Snapshot(s.types) }

// Identity implements connector.Identified: the server, the database and
// the key prefix, which name what the sink writes.
func (s *Sink) Identity() string {
	return fmt.Sprintf("redis|%s|%d|%s", s.client.Addr(), s.db, s.prefix)
}

// ExactlyOnce reports whether the sink writes only what completed
// checkpoints cover (it is exactly-once, and its job takes checkpoints).
func (s *Sink) ExactlyOnce() bool { return s.buf.Held() }

// Flush implements connector.Sink: at least once, everything written so
// far is in Redis when it returns; exactly-once, what completed
// checkpoints hold is (Commit).
func (s *Sink) Flush(ctx context.Context) error { return s.buf.Flush(ctx) }

// Close implements connector.Sink: it writes what is buffered (at least
// once; exactly-once it drops what no completed checkpoint holds, which
// the job's next run replays) and closes the connections.
func (s *Sink) Close() error {
	err := s.buf.Close(context.Background())
	if cerr := s.client.Close(); err == nil {
		err = cerr
	}
	return err
}

// Stats returns how many batches the sink wrote and how many writes it
// tried again.
func (s *Sink) Stats() (writes, retries int64) { return s.buf.Stats() }

// rowKey returns the Redis key of a row: the prefix, then its primary key
// values joined by the separator, as Lookuper.Key makes it.
func (l *layout) rowKey(row []types.Value) string {
	var b strings.Builder
	b.WriteString(l.prefix)
	for n, c := range l.pk {
		if n > 0 {
			b.WriteString(l.sep)
		}
		b.WriteString(keyText(row[c], l.schema.Columns[c].Type))
	}
	return b.String()
}

// valueText is how a value is written to Redis: as CAST(v AS STRING)
// gives it, which a lookup parses back (binary strings as their bytes).
func valueText(dst []byte, v types.Value, t types.Type) []byte {
	if v.Kind().IsBinary() {
		return append(dst, v.Str()...)
	}
	return types.AppendValue(dst, v, t)
}

// write writes a batch in MULTI/EXEC transactions of up to maxPipeline
// keys, each one round trip. Every command sets or deletes a whole key,
// so a batch written again leaves what one write would.
func (s *Sink) write(ctx context.Context, batch []sinkbuf.Change) error {
	for len(batch) > 0 {
		n := min(maxPipeline, len(batch))
		chunk := batch[:n]
		batch = batch[n:]
		cmds := append(s.cmds[:0], []string{"MULTI"})
		for _, c := range chunk {
			var err error
			if cmds, err = s.queue(cmds, s.rowKey(c.Vals), c); err != nil {
				return sinkbuf.Permanent(err)
			}
		}
		cmds = append(cmds, []string{"EXEC"})
		s.cmds = cmds
		replies, err := s.client.Pipeline(ctx, cmds)
		if err != nil {
			return s.writeError(fmt.Sprintf("cannot write %d keys", n), err)
		}
		// MULTI's OK, then QUEUED for each command (or the error that
		// refused it, which aborts the EXEC), then EXEC's replies.
		for i, r := range replies[1 : len(replies)-1] {
			if e := r.Err(); e != nil {
				return s.writeError(s.describe(i+1), e)
			}
		}
		exec := replies[len(replies)-1]
		if e := exec.Err(); e != nil {
			return s.writeError("EXEC", e)
		}
		for i, r := range exec.Array {
			if e := r.Err(); e != nil && !errors.Is(e, resp.Nil) {
				return s.writeError(s.describe(i+1), e)
			}
		}
		clear(cmds) // let the values go
	}
	return nil
}

// describe names command i of the last batch: its name and key.
func (s *Sink) describe(i int) string {
	if i >= len(s.cmds) || len(s.cmds[i]) < 2 {
		return "a command"
	}
	return s.cmds[i][0] + " " + s.cmds[i][1]
}

// queue appends the commands of one change to cmds.
func (s *Sink) queue(cmds [][]string, key string, c sinkbuf.Change) ([][]string, error) {
	if c.Delete {
		return append(cmds, []string{"DEL", key}), nil
	}
	if s.hash {
		set := []string{"HSET", key}
		var del []string
		for i, v := range c.Vals {
			name := s.schema.Columns[i].Name
			if v.IsNull() {
				del = append(del, name)
				continue
			}
			set = append(set, name, string(valueText(nil, v, s.schema.Columns[i].Type)))
		}
		// The key columns are never NULL: there is a field to set.
		cmds = append(cmds, set)
		if len(del) > 0 {
			cmds = append(cmds, append([]string{"HDEL", key}, del...))
		}
		if s.settings.ttl > 0 {
			cmds = append(cmds, []string{"PEXPIRE", key, strconv.FormatInt(s.settings.ttl.Milliseconds(), 10)})
		}
		return cmds, nil
	}
	var err error
	s.text = s.text[:0]
	if s.enc != nil {
		s.text, err = s.enc.Encode(s.text, types.Row{Kind: types.Insert, Origin: types.NoOrigin, Vals: c.Vals})
		if err != nil {
			return cmds, fmt.Errorf("redis table '%s': key %s: cannot encode the row: %w", s.name, key, err)
		}
	} else {
		v := c.Vals[s.valueCol]
		if v.IsNull() {
			return append(cmds, []string{"DEL", key}), nil // a string has no NULL: no value, no key
		}
		s.text = valueText(s.text, v, s.schema.Columns[s.valueCol].Type)
	}
	set := []string{"SET", key, string(s.text)}
	if s.settings.ttl > 0 {
		set = append(set, "PX", strconv.FormatInt(s.settings.ttl.Milliseconds(), 10))
	}
	return append(cmds, set), nil
}

// writeError wraps a Redis error, marked Permanent when no retry can cure
// it (a key that holds another type, a command the server refuses).
func (s *Sink) writeError(what string, err error) error {
	err = fmt.Errorf("redis table '%s': %s: %w", s.name, what, connector.ClassifyTLS(err))
	var te *connector.TLSError
	if errors.As(err, &te) {
		return sinkbuf.Permanent(err)
	}
	var re resp.Error
	if errors.As(err, &re) {
		msg := string(re)
		for _, p := range []string{"WRONGTYPE", "NOPERM", "WRONGPASS", "NOAUTH", "ERR unknown command", "EXECABORT"} {
			if strings.HasPrefix(msg, p) {
				return sinkbuf.Permanent(err)
			}
		}
	}
	return err
}

var (
	_ connector.SinkFactory   = Factory{}
	_ connector.ChangelogSink = Factory{}
	_ connector.StatefulSink  = (*Sink)(nil)
	_ connector.Identified    = (*Sink)(nil)
)
