package jdbc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/lib/pq"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/redact"
	"github.com/sluicesql/sluice/connector/sinkbuf"
	"github.com/sluicesql/sluice/types"
)

// sinkSettings are the sink's options, as Flink's JDBC sink has them, and
// its delivery guarantee.
type sinkSettings struct {
	maxRows    int           // 'sink.buffer-flush.max-rows' (100; 0: no limit)
	interval   time.Duration // 'sink.buffer-flush.interval' (1 s; 0: none)
	maxRetries int           // 'sink.max-retries' (3)
	// 'sink.delivery-guarantee': in a job that takes checkpoints, write
	// only what completed checkpoints cover (the default with a primary
	// key), or write as Flink does and count on idempotence.
	exactlyOnce bool
}

const (
	exactlyOnce = "exactly-once"
	atLeastOnce = "at-least-once"
)

// parseGuarantee reads 'sink.delivery-guarantee': exactly-once (the
// default) for a sink that writes by key, at-least-once for one that
// appends.
func parseGuarantee(o connector.Options, keyed bool) (bool, error) {
	def := atLeastOnce
	if keyed {
		def = exactlyOnce
	}
	switch g := strings.ToLower(o.String(optGuarantee, def)); g {
	case exactlyOnce:
		if !keyed {
			return false, fmt.Errorf("option '%s' = '%s' needs a PRIMARY KEY: appended rows replayed after a failure are inserted again", optGuarantee, g)
		}
		return true, nil
	case atLeastOnce:
		return false, nil
	default:
		return false, fmt.Errorf("option '%s': unsupported value '%s' (expected '%s' or '%s')", optGuarantee, g, exactlyOnce, atLeastOnce)
	}
}

func parseSinkOptions(o connector.Options, keyed bool) (sinkSettings, error) {
	var s sinkSettings
	var err error
	if s.exactlyOnce, err = parseGuarantee(o, keyed); err != nil {
		return s, err
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
// times as long (Flink's JDBC sink waits n seconds).
const retryBackoff = time.Second

// maxParams is the most parameters one statement carries (PostgreSQL's
// and MySQL's limit is 65,535), and maxStmtRows the most rows.
const (
	maxParams   = 65535
	maxStmtRows = 1000
)

// AcceptsChangelog implements connector.ChangelogSink: a table with a
// PRIMARY KEY takes updates and deletes (upserted and deleted by key).
func (Factory) AcceptsChangelog(t connector.Table, _ connector.Env) bool {
	return len(t.PrimaryKey) > 0
}

// CreateSink implements connector.SinkFactory. Nothing connects before
// the first write.
func (Factory) CreateSink(t connector.Table, env connector.Env) (connector.Sink, error) {
	s, err := newSink(t, env)
	if err != nil {
		return nil, redact.Error(err, redact.Secrets(t.Options)...)
	}
	return s, nil
}

// Sink writes rows into a database table (a connector.Sink). With a
// PRIMARY KEY it upserts +I and +U rows and deletes by key on -D rows
// (-U rows are skipped: the +U that follows replaces the row); without
// one it inserts, and takes +I rows only. Rows are buffered and reduced by
// key (sinkbuf), and each batch is written in one transaction of
// multi-row statements: upserts first, then deletes (a batch holds each
// key once, so their order does not matter).
//
// Exactly-once ('sink.delivery-guarantee', the default with a primary
// key), in a job that takes checkpoints, the sink is a two-step
// connector.StatefulSink: at a checkpoint barrier it seals what it got
// since the last one and keeps it in the checkpoint; once the checkpoint
// is complete it writes it. The table then only ever holds the output of
// completed checkpoints; a restarted job writes its last checkpoint's
// sealed changes again (idempotent upserts and deletes) and replays its
// input from there, so the table ends exact, whatever the query. At
// least once, it writes as Flink's JDBC sink does: when the buffer holds
// 'sink.buffer-flush.max-rows' changes, every 'sink.buffer-flush.interval'
// and at every checkpoint; a replay writes again what was written after
// the last checkpoint, which upserts make right for a key the replay
// writes again, but which leaves, say, a row of an aggregate of an
// aggregate that only the first run's timing produced.
type Sink struct {
	cfg    *config
	name   string
	db     *sql.DB
	keys   []int    // primary key columns, in declared order; nil: append
	keyCol []string // their names
	buf    *sinkbuf.Buffer
	keyBuf []byte
	types  []types.Type // the columns', for the snapshot
	log    func(format string, args ...any)

	// Touched by write only, which the buffer runs under its lock.
	checked bool
	limits  []intLimit // by column, from the check: the range of a narrower integer column
	stmts   map[stmtKey]string
	args    []any
}

type stmtKey struct {
	del bool
	n   int
}

func newSink(t connector.Table, env connector.Env) (*Sink, error) {
	c, err := parseConfig(t)
	if err != nil {
		return nil, err
	}
	s := &Sink{cfg: &c, name: t.Name, stmts: make(map[stmtKey]string), log: env.Log}
	for _, col := range t.Schema.Columns {
		s.types = append(s.types, col.Type)
	}
	for _, k := range t.PrimaryKey {
		i := t.Schema.Index(k)
		if i < 0 {
			return nil, fmt.Errorf("jdbc: primary key column '%s' is not a physical column", k)
		}
		s.keys = append(s.keys, i)
		s.keyCol = append(s.keyCol, c.cols[i])
	}
	if s.db, err = c.open(true); err != nil {
		return nil, err
	}
	what := fmt.Sprintf("jdbc table '%s'", t.Name)
	s.buf = sinkbuf.New(s.keys != nil, sinkbuf.Options{
		MaxRows: c.sink.maxRows, Interval: c.sink.interval, MaxRetries: c.sink.maxRetries,
		Backoff: retryBackoff, What: what, Log: env.Logf,
	}, func(ctx context.Context, batch []sinkbuf.Change) error {
		return redact.Error(s.write(ctx, batch), c.secrets...)
	})
	return s, nil
}

// Write implements connector.Sink.
func (s *Sink) Write(ctx context.Context, b *types.Batch) error {
	for i := range b.Rows {
		r := &b.Rows[i]
		if s.keys == nil {
			if r.Kind != types.Insert {
				return fmt.Errorf("jdbc table '%s' has no PRIMARY KEY and takes inserts only (got a %s row): "+
					"declare the PRIMARY KEY of the database table to upsert an updating query", s.name, r.Kind)
			}
			if err := s.buf.Add(ctx, nil, r.Vals, false); err != nil {
				return err
			}
			continue
		}
		if r.Kind == types.UpdateBefore {
			continue // the +U that follows replaces the row
		}
		for _, k := range s.keys {
			if r.Vals[k].IsNull() {
				return fmt.Errorf("jdbc table '%s': primary key column '%s' is NULL in a %s row", s.name, s.cfg.cols[k], r.Kind)
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
	for _, k := range s.keys {
		dst = types.AppendKey(dst, vals[k])
	}
	return dst
}

// Restore implements connector.StatefulSink: an exactly-once sink in a
// job that takes checkpoints writes at commits only, and first writes
// what the last checkpoint sealed.
func (s *Sink) Restore(ctx context.Context, r connector.SinkRestore) error {
	if s.cfg.sink.exactlyOnce && r.Checkpointed {
		s.buf.Hold()
	} else if r.Checkpointed {
		// Every durable sink says when it is not exactly-once.
		s.log("jdbc table '%s' is at-least-once: after a failure, what it wrote since the job's last checkpoint is written again", s.name)
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

// Identity implements connector.Identified: the url (its secrets masked),
// the table and the user, which name what the sink writes.
func (s *Sink) Identity() string {
	return fmt.Sprintf("jdbc|%s|%s|%s", redact.URL(s.cfg.url), s.cfg.table, s.cfg.user)
}

// ExactlyOnce reports whether the sink writes only what completed
// checkpoints cover (it is exactly-once, and its job takes checkpoints).
func (s *Sink) ExactlyOnce() bool { return s.buf.Held() }

// Flush implements connector.Sink: at least once, everything written so
// far is in the database, committed, when it returns; exactly-once, what
// completed checkpoints hold is (Commit).
func (s *Sink) Flush(ctx context.Context) error { return s.buf.Flush(ctx) }

// Close implements connector.Sink: it writes what is buffered (at least
// once; exactly-once it drops what no completed checkpoint holds, which
// the job's next run replays) and closes the connections.
func (s *Sink) Close() error {
	err := s.buf.Close(context.Background())
	if cerr := s.db.Close(); err == nil {
		err = cerr
	}
	return err
}

// Upsert reports whether the sink upserts by a primary key (else it
// appends).
func (s *Sink) Upsert() bool { return s.keys != nil }

// Stats returns how many batches the sink wrote and how many writes it
// tried again.
func (s *Sink) Stats() (writes, retries int64) { return s.buf.Stats() }

// write writes a batch in one transaction: the upserts (or inserts), then
// the deletes. A failed batch is rolled back whole and may be written
// again.
func (s *Sink) write(ctx context.Context, batch []sinkbuf.Change) error {
	if !s.checked {
		if err := s.check(ctx); err != nil {
			return err
		}
		s.checked = true
	}
	var ups, dels []sinkbuf.Change
	for _, c := range batch {
		if c.Delete {
			dels = append(dels, c)
		} else {
			ups = append(ups, c)
		}
	}
	if s.statements(len(ups), len(s.cfg.cols))+s.statements(len(dels), len(s.keys)) == 1 {
		// One statement is a transaction of its own: no BEGIN and
		// COMMIT round trips.
		if err := s.exec(ctx, s.db, ups, false); err != nil {
			return err
		}
		return s.exec(ctx, s.db, dels, true)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.writeError("cannot begin a transaction", err)
	}
	defer tx.Rollback() // after a Commit, a no-op
	if err := s.exec(ctx, tx, ups, false); err != nil {
		return err
	}
	if err := s.exec(ctx, tx, dels, true); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return s.writeError(fmt.Sprintf("cannot commit %d changes", len(batch)), err)
	}
	return nil
}

// rowsPerStatement is how many rows of cols columns one statement
// carries.
func rowsPerStatement(cols int) int { return min(maxStmtRows, max(1, maxParams/max(1, cols))) }

// statements is how many statements write n rows of cols columns.
func (s *Sink) statements(n, cols int) int {
	per := rowsPerStatement(cols)
	return (n + per - 1) / per
}

// execer runs a statement: the pool (autocommit) or a transaction.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// exec runs the statements that write changes: inserts (upserts), or the
// deletes of their keys, as many rows to a statement as the limits allow.
func (s *Sink) exec(ctx context.Context, tx execer, changes []sinkbuf.Change, del bool) error {
	if len(changes) == 0 {
		return nil
	}
	cols := s.cfg.cols
	idx := []int(nil) // the columns passed: all, or the key's
	if del {
		cols, idx = s.keyCol, s.keys
	}
	per := rowsPerStatement(len(cols))
	for len(changes) > 0 {
		n := min(per, len(changes))
		chunk := changes[:n]
		changes = changes[n:]
		args := s.args[:0]
		for _, c := range chunk {
			if idx == nil {
				for i, v := range c.Vals {
					p, err := s.param(i, v)
					if err != nil {
						return sinkbuf.Permanent(fmt.Errorf("jdbc table '%s' (%s): column '%s': %w", s.name, s.cfg.table, cols[i], err))
					}
					args = append(args, p)
				}
				continue
			}
			for j, i := range idx {
				p, err := s.param(i, c.Vals[i])
				if err != nil {
					return sinkbuf.Permanent(fmt.Errorf("jdbc table '%s' (%s): column '%s': %w", s.name, s.cfg.table, cols[j], err))
				}
				args = append(args, p)
			}
		}
		s.args = args
		q, ok := s.stmts[stmtKey{del, n}]
		if !ok {
			if del {
				q = s.cfg.target.dialect.deleteSQL(s.cfg.table, s.keyCol, n)
			} else {
				q = s.cfg.target.dialect.insertSQL(s.cfg.table, s.cfg.cols, s.keyCol, n)
			}
			s.stmts[stmtKey{del, n}] = q
		}
		_, err := tx.ExecContext(ctx, q, args...)
		clear(args)
		if err != nil {
			what := "upsert"
			switch {
			case del:
				what = "delete"
			case s.keys == nil:
				what = "insert"
			}
			return s.writeError(fmt.Sprintf("cannot %s %d rows", what, n), err)
		}
	}
	return nil
}

// param turns the value of column i into a statement parameter. An
// integer out of the range of its column (a PostgreSQL SMALLINT or
// INTEGER) is an error that names the column: PostgreSQL's own says
// only "out of range for type smallint", of a statement of many rows.
func (s *Sink) param(i int, v types.Value) (any, error) {
	if i < len(s.limits) && s.limits[i].bits > 0 && v.Kind().IsInteger() && !v.IsNull() {
		if n, l := v.Int(), s.limits[i]; n < -1<<(l.bits-1) || n > 1<<(l.bits-1)-1 {
			return nil, fmt.Errorf("%d is out of the range of %s", n, l.dbType)
		}
	}
	return writeParam(v)
}

// intLimit is the width of a PostgreSQL integer column narrower than
// BIGINT (bits 0: no limit but the value's own).
type intLimit struct {
	bits   uint
	dbType string
}

// intLimitOf returns the limit of a column of database type dbType.
func intLimitOf(d dialect, dbType string) intLimit {
	if d != postgres {
		return intLimit{} // MySQL's error names the column
	}
	switch dbType {
	case "INT2":
		return intLimit{16, "SMALLINT"}
	case "INT4":
		return intLimit{32, "INTEGER"}
	}
	return intLimit{}
}

// writeError wraps a database error of a write, marked Permanent when no
// retry can cure it (a missing table or column, a value the table
// refuses).
func (s *Sink) writeError(what string, err error) error {
	var pg *pq.Error
	if errors.As(err, &pg) && pg.Column != "" {
		what += fmt.Sprintf(" (column '%s')", pg.Column)
	}
	err = fmt.Errorf("jdbc table '%s' (%s): %s: %w", s.name, s.cfg.table, what, err)
	if permanentWriteError(err) {
		return sinkbuf.Permanent(err)
	}
	return err
}

// permanentWriteError reports whether err is the database refusing a
// write for a reason that trying again cannot cure: the statement names a
// table or column it does not have, or a value does not fit its column or
// breaks a constraint. Lost connections, deadlocks, timeouts and whatever
// is not known are tried again.
func permanentWriteError(err error) bool {
	var pg *pq.Error
	if errors.As(err, &pg) && len(pg.Code) == 5 {
		switch pg.Code[:2] {
		case "22", // data exception: out of range, too long, invalid text
			"23", // integrity constraint violation
			"42", // syntax error or access rule violation
			"0A", // feature not supported
			"28": // invalid authorization
			return true
		}
		return false
	}
	var my *mysql.MySQLError
	if errors.As(err, &my) {
		switch my.Number {
		case 1044, 1045, 1142, 1143, // access denied
			1048,             // column cannot be null
			1054, 1064, 1146, // unknown column, syntax error, no such table
			1062,                   // duplicate entry
			1264, 1265, 1292, 1366, // out of range, truncated, incorrect value
			1406,       // data too long
			1451, 1452: // foreign key
			return true
		}
		return false
	}
	if errors.Is(err, io.EOF) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return false
	}
	// A parameter database/sql cannot convert: the column check rules
	// the known cases out.
	return strings.Contains(err.Error(), "unsupported type")
}

// check makes sure, before the first write, that the table has the
// sink's columns with types that take its values and, for upserts, a
// primary key or unique index on exactly the PRIMARY KEY's columns (MySQL
// would otherwise insert duplicates where an upsert was meant).
func (s *Sink) check(ctx context.Context) error {
	d := s.cfg.target.dialect
	var b strings.Builder
	b.WriteString("SELECT ")
	d.list(&b, s.cfg.cols)
	b.WriteString(" FROM ")
	d.quote(&b, s.cfg.table)
	b.WriteString(" WHERE 1 = 0")
	rs, err := s.db.QueryContext(ctx, b.String())
	if err != nil {
		err = fmt.Errorf("jdbc table '%s': cannot write %s: %w", s.name, s.cfg.table, err)
		if schemaError(err) {
			return sinkbuf.Permanent(err)
		}
		return err
	}
	cts, err := rs.ColumnTypes()
	rs.Close()
	if err != nil {
		return fmt.Errorf("jdbc table '%s': cannot read the columns of %s: %w", s.name, s.cfg.table, err)
	}
	s.limits = s.limits[:0]
	for i, ct := range cts {
		if i >= len(s.cfg.cols) {
			break
		}
		if err := checkWritable(d, s.cfg.cols[i], ct.DatabaseTypeName(), s.cfg.schema.Columns[i].Type); err != nil {
			return sinkbuf.Permanent(fmt.Errorf("jdbc table '%s' (%s): %w", s.name, s.cfg.table, err))
		}
		s.limits = append(s.limits, intLimitOf(d, ct.DatabaseTypeName()))
	}
	if s.keys == nil {
		return nil
	}
	uniques, err := s.uniqueKeys(ctx)
	if err != nil {
		return fmt.Errorf("jdbc table '%s': cannot read the unique keys of %s: %w", s.name, s.cfg.table, err)
	}
	for _, u := range uniques {
		if sameColumns(d, u, s.keyCol) {
			return nil
		}
	}
	return sinkbuf.Permanent(fmt.Errorf("jdbc table '%s': %s has no primary key or unique index on exactly (%s), "+
		"which upserts by the table's PRIMARY KEY need (its unique keys: %s)",
		s.name, s.cfg.table, strings.Join(s.keyCol, ", "), describeKeys(uniques)))
}

// uniqueKeys returns the column sets of the table's primary key and
// unique indexes (not partial ones, which ON CONFLICT cannot use).
func (s *Sink) uniqueKeys(ctx context.Context) ([][]string, error) {
	schema, table, qualified := strings.Cut(s.cfg.table, ".")
	var rs *sql.Rows
	var err error
	if s.cfg.target.dialect == postgres {
		var b strings.Builder
		postgres.quote(&b, s.cfg.table)
		rs, err = s.db.QueryContext(ctx, `SELECT i.indexrelid::bigint, a.attname::text
FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
WHERE i.indrelid = to_regclass($1) AND i.indisunique AND i.indpred IS NULL
ORDER BY 1`, b.String())
	} else {
		var db any // the connection's database
		if qualified {
			db = schema
		} else {
			table = schema
		}
		rs, err = s.db.QueryContext(ctx, `SELECT INDEX_NAME, COLUMN_NAME FROM information_schema.STATISTICS
WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ? AND NON_UNIQUE = 0
ORDER BY INDEX_NAME, SEQ_IN_INDEX`, db, table)
	}
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out [][]string
	last := ""
	for rs.Next() {
		var index, col string
		if err := rs.Scan(&index, &col); err != nil {
			return nil, err
		}
		if len(out) == 0 || index != last {
			out = append(out, nil)
			last = index
		}
		out[len(out)-1] = append(out[len(out)-1], col)
	}
	return out, rs.Err()
}

// sameColumns reports whether two sets of column names are the same
// (MySQL's names compare without case).
func sameColumns(d dialect, a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.ContainsFunc(b, func(y string) bool { return x == y || d == mySQL && strings.EqualFold(x, y) }) {
			return false
		}
	}
	return true
}

func describeKeys(keys [][]string) string {
	if len(keys) == 0 {
		return "none"
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = "(" + strings.Join(k, ", ") + ")"
	}
	return strings.Join(parts, ", ")
}

var (
	_ connector.SinkFactory   = Factory{}
	_ connector.ChangelogSink = Factory{}
	_ connector.StatefulSink  = (*Sink)(nil)
	_ connector.Identified    = (*Sink)(nil)
)
