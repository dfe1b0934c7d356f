package jdbc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/lib/pq"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/lookupcache"
	"github.com/sluicesql/sluice/connector/redact"
	"github.com/sluicesql/sluice/types"
)

// Factory builds jdbc lookup sources and sinks.
type Factory struct{}

// New returns the jdbc connector factory.
func New() Factory { return Factory{} }

// Name implements connector.Factory.
func (Factory) Name() string { return "jdbc" }

// Option keys of the connector itself; the lookup options are
// lookupcache's.
const (
	optURL        = "url"
	optTable      = "table-name"
	optUser       = "username"
	optPassword   = "password"
	optDriver     = "driver"
	optMaxTimeout = "connection.max-retry-timeout"

	optFlushRows     = "sink.buffer-flush.max-rows"
	optFlushInterval = "sink.buffer-flush.interval"
	optMaxRetries    = "sink.max-retries"
	optParallelism   = "sink.parallelism"
	optGuarantee     = "sink.delivery-guarantee"
)

// sinkOptions are the options of the sink; a table used both as a
// dimension table and as a sink may carry them and the lookup's.
var sinkOptions = []string{optFlushRows, optFlushInterval, optMaxRetries, optParallelism, optGuarantee}

// config is a table's parsed options.
type config struct {
	url, table, user string
	target           target
	// secrets are the table's secret option values (the password, the
	// URL's), masked in every error the connector returns.
	secrets []string
	lookup  lookupcache.Settings
	sink    sinkSettings
	cols    []string
	schema  types.Schema
}

func parseConfig(t connector.Table) (config, error) {
	c := config{secrets: redact.Secrets(t.Options)}
	if err := connector.RejectMetadata("jdbc", t); err != nil {
		return c, err
	}
	known := append([]string{"connector", optURL, optTable, optUser, optPassword, optDriver, optMaxTimeout}, lookupcache.Options()...)
	known = append(known, sinkOptions...)
	if err := t.Options.CheckKnown("jdbc", known); err != nil {
		return c, err
	}
	var err error
	if c.url, err = t.Options.Required(optURL); err != nil {
		return c, err
	}
	if c.table, err = t.Options.Required(optTable); err != nil {
		return c, err
	}
	c.user = t.Options[optUser]
	timeout, err := t.Options.Duration(optMaxTimeout, 60*time.Second)
	if err != nil {
		return c, err
	}
	if c.target, err = parseURL(c.url, c.user, t.Options[optPassword], timeout); err != nil {
		return c, err
	}
	if d, ok := t.Options[optDriver]; ok {
		want, known := drivers[d]
		if !known {
			return c, fmt.Errorf("option '%s': unknown driver '%s' (known: org.postgresql.Driver, com.mysql.cj.jdbc.Driver, org.mariadb.jdbc.Driver)", optDriver, d)
		}
		if want != c.target.dialect {
			return c, fmt.Errorf("option '%s': driver '%s' is for %s, but the url names %s", optDriver, d, want, c.target.dialect)
		}
	}
	if c.lookup, err = lookupcache.ParseOptions(t.Options); err != nil {
		return c, err
	}
	if c.sink, err = parseSinkOptions(t.Options, len(t.PrimaryKey) > 0); err != nil {
		return c, err
	}
	if t.Schema.Len() == 0 {
		return c, fmt.Errorf("jdbc table has no columns")
	}
	c.schema = t.Schema
	c.cols = t.Schema.Names()
	for _, col := range t.Schema.Columns {
		if !supported(col.Type.Kind) {
			return c, fmt.Errorf("column '%s': the jdbc connector cannot read columns of type %s", col.Name, col.Type)
		}
	}
	return c, nil
}

func supported(k types.Kind) bool {
	return k >= types.KindBoolean && k <= types.KindTimestampLTZ
}

// open returns a connection pool to the database; it does not connect.
// A pool for writes (forWrites) to MySQL interpolates parameters into
// the statements (a round trip each, rather than prepare, execute and
// close) and runs its sessions in strict mode, so that a value that does
// not fit its column is an error, never truncated.
func (c *config) open(forWrites bool) (*sql.DB, error) {
	var db *sql.DB
	if c.target.dialect == postgres {
		conn, err := pq.NewConnector(c.target.dsn)
		if err != nil {
			return nil, redact.Error(fmt.Errorf("jdbc: url %s: %w", redact.URL(c.url), err), c.secrets...)
		}
		db = sql.OpenDB(conn)
	} else {
		mc, err := mysql.ParseDSN(c.target.dsn)
		if err != nil {
			return nil, redact.Error(fmt.Errorf("jdbc: url %s: %w", redact.URL(c.url), err), c.secrets...)
		}
		mc.Logger = nopLogger{}
		if forWrites {
			mc.InterpolateParams = true
			if mc.Params == nil {
				mc.Params = map[string]string{}
			}
			mc.Params["sql_mode"] = "TRIM(BOTH ',' FROM CONCAT(@@sql_mode, ',STRICT_ALL_TABLES'))"
		}
		conn, err := mysql.NewConnector(mc)
		if err != nil {
			return nil, redact.Error(fmt.Errorf("jdbc: url %s: %w", redact.URL(c.url), err), c.secrets...)
		}
		db = sql.OpenDB(conn)
	}
	db.SetMaxOpenConns(4)
	db.SetMaxIdleConns(2)
	db.SetConnMaxIdleTime(5 * time.Minute)
	return db, nil
}

type nopLogger struct{}

func (nopLogger) Print(...any) {}

// CreateLookup implements connector.LookupFactory: a FullSource with
// 'lookup.cache' = 'FULL', else a KeyLookuper.
func (Factory) CreateLookup(t connector.Table, env connector.Env) (connector.LookupSource, error) {
	c, err := parseConfig(t)
	if err != nil {
		return nil, redact.Error(err, c.secrets...)
	}
	db, err := c.open(false)
	if err != nil {
		return nil, err
	}
	q := query{cfg: &c, name: t.Name}
	if c.lookup.Mode == lookupcache.Full {
		return &FullSource{query: q, db: db, sql: c.target.dialect.selectSQL(c.table, c.cols, nil)}, nil
	}
	l := &Lookuper{query: q, db: db, stmts: make(map[string]*stmt)}
	fetch := func(ctx context.Context, keyCols []int, key []types.Value, dst [][]types.Value) ([][]types.Value, error) {
		rows, err := l.fetch(ctx, keyCols, key, dst)
		return rows, redact.Error(err, c.secrets...)
	}
	fetchBatch := func(ctx context.Context, keyCols []int, keys [][]types.Value, add func(i int, row []types.Value)) error {
		return redact.Error(l.fetchBatch(ctx, keyCols, keys, add), c.secrets...)
	}
	l.Lookuper = lookupcache.NewLookuper(c.lookup, fetch, lookupcache.EnvClock(env.Now)).WithBatch(fetchBatch, maxBatch)
	return l, nil
}

// query reads rows of the table's schema from a result.
type query struct {
	cfg  *config
	name string
}

// scan reads every row of rs, checking the database types once (when
// *checked is false), and calls emit with each (the slice is reused).
func (q query) scan(rs *sql.Rows, checked *atomic.Bool, emit func([]types.Value) error) error {
	return q.scanLed(rs, checked, false, func(_ int, row []types.Value) error { return emit(row) })
}

// scanLed is scan for results whose rows are led, when led, by an integer
// column (a batch lookup's key position), passed to emit with the row.
func (q query) scanLed(rs *sql.Rows, checked *atomic.Bool, led bool, emit func(pos int, row []types.Value) error) error {
	lead := 0
	if led {
		lead = 1
	}
	if !checked.Load() {
		cts, err := rs.ColumnTypes()
		if err != nil {
			return err
		}
		for i, ct := range cts[lead:] {
			if err := checkColumn(q.cfg.cols[i], ct.DatabaseTypeName(), q.cfg.schema.Columns[i].Type); err != nil {
				return lookupcache.Permanent(fmt.Errorf("jdbc table %s (%s): %w", q.name, q.cfg.table, err))
			}
		}
		checked.Store(true)
	}
	n := len(q.cfg.cols)
	var pos int64
	raw := make([]any, n)
	ptrs := make([]any, 0, lead+n)
	if led {
		ptrs = append(ptrs, &pos)
	}
	for i := range raw {
		ptrs = append(ptrs, &raw[i])
	}
	row := make([]types.Value, n)
	for rs.Next() {
		if err := rs.Scan(ptrs...); err != nil {
			return err
		}
		for i := range raw {
			v, err := convert(raw[i], q.cfg.schema.Columns[i].Type)
			if err != nil {
				return lookupcache.Permanent(fmt.Errorf("jdbc table %s (%s): column '%s': %w", q.name, q.cfg.table, q.cfg.cols[i], err))
			}
			row[i] = v
		}
		if err := emit(int(pos), row); err != nil {
			return err
		}
	}
	return rs.Err()
}

// FullSource loads a jdbc table in full (a connector.FullSource).
type FullSource struct {
	query
	db      *sql.DB
	sql     string
	checked atomic.Bool
}

// Load implements connector.FullSource: one SELECT of every row.
func (s *FullSource) Load(ctx context.Context, emit func(row []types.Value) error) error {
	return redact.Error(s.load(ctx, emit), s.cfg.secrets...)
}

func (s *FullSource) load(ctx context.Context, emit func(row []types.Value) error) error {
	rs, err := s.db.QueryContext(ctx, s.sql)
	if err != nil {
		return fmt.Errorf("jdbc table %s: cannot load %s: %w", s.name, s.cfg.table, err)
	}
	defer rs.Close()
	if err := s.scan(rs, &s.checked, emit); err != nil {
		if lookupcache.IsPermanent(err) {
			return err
		}
		return fmt.Errorf("jdbc table %s: cannot load %s: %w", s.name, s.cfg.table, err)
	}
	return nil
}

// ReloadInterval implements connector.FullSource.
func (s *FullSource) ReloadInterval() time.Duration { return s.cfg.lookup.ReloadInterval }

// Identity implements connector.FullSource: the connector, url (its
// secrets masked), table, user and the columns read (not the password).
func (s *FullSource) Identity() string {
	return fmt.Sprintf("jdbc|%s|%s|%s|%s", redact.URL(s.cfg.url), s.cfg.table, s.cfg.user, s.cfg.schema)
}

// SQL returns the statement Load runs.
func (s *FullSource) SQL() string { return s.sql }

// Close implements connector.LookupSource.
func (s *FullSource) Close() error { return s.db.Close() }

// Lookuper looks rows up by key with a prepared statement per key set (a
// connector.KeyLookuper), through a per-job cache.
type Lookuper struct {
	*lookupcache.Lookuper
	query
	db *sql.DB

	mu    sync.Mutex
	stmts map[string]*stmt // by key columns
}

// stmt is the prepared lookup by one key set.
type stmt struct {
	sql     string
	st      *sql.Stmt
	checked atomic.Bool
}

// SQL returns the statement that looks rows up by the columns keyCols.
func (l *Lookuper) SQL(keyCols []int) string {
	where := make([]string, len(keyCols))
	for i, c := range keyCols {
		where[i] = l.cfg.cols[c]
	}
	return l.cfg.target.dialect.selectSQL(l.cfg.table, l.cfg.cols, where)
}

// batchSQL returns the statement that looks n keys up by the columns
// keyCols in one round trip.
func (l *Lookuper) batchSQL(keyCols []int, n int) string {
	where := make([]string, len(keyCols))
	for i, c := range keyCols {
		where[i] = l.cfg.cols[c]
	}
	return l.cfg.target.dialect.batchSQL(l.cfg.table, l.cfg.cols, where, n)
}

// prepared returns the statement that looks keys up by the columns
// keyCols: one key (n = 0) or n keys at once, prepared on first use.
func (l *Lookuper) prepared(ctx context.Context, keyCols []int, n int) (*stmt, error) {
	var sig strings.Builder
	for _, c := range keyCols {
		if c < 0 || c >= len(l.cfg.cols) {
			return nil, lookupcache.Permanent(fmt.Errorf("jdbc table %s: no key column %d", l.name, c))
		}
		fmt.Fprintf(&sig, "%d,", c)
	}
	fmt.Fprintf(&sig, "x%d", n)
	l.mu.Lock()
	defer l.mu.Unlock()
	if s, ok := l.stmts[sig.String()]; ok {
		return s, nil
	}
	s := &stmt{sql: l.SQL(keyCols)}
	if n > 0 {
		s.sql = l.batchSQL(keyCols, n)
	}
	st, err := l.db.PrepareContext(ctx, s.sql)
	if err != nil {
		what := s.sql
		if n > 0 { // the statement repeats one SELECT n times: show one
			what = fmt.Sprintf("the lookup of %d keys at once (%s UNION ALL ...)", n, l.batchSQL(keyCols, 1))
		}
		err = fmt.Errorf("jdbc table %s: cannot prepare %s: %w", l.name, what, err)
		if schemaError(err) {
			err = lookupcache.Permanent(err) // no retry brings a table or a column
		}
		return nil, err
	}
	s.st = st
	l.stmts[sig.String()] = s
	return s, nil
}

// schemaError reports whether err is the database saying that a statement
// names a table or a column it does not have, or is not valid SQL: an
// error that trying again cannot fix.
func schemaError(err error) bool {
	var pg *pq.Error
	if errors.As(err, &pg) {
		return strings.HasPrefix(string(pg.Code), "42") // syntax error or access rule violation
	}
	var my *mysql.MySQLError
	if errors.As(err, &my) {
		switch my.Number {
		case 1054, 1064, 1146: // unknown column, syntax error, no such table
			return true
		}
	}
	return false
}

// maxBatch is the most keys one statement looks up.
const maxBatch = 128

// fetchBatch implements lookupcache.FetchBatch for up to maxBatch keys:
// one statement. Statements come in sizes that are powers of two, so that
// few are prepared; the places a batch leaves over hold NULLs, which
// match nothing.
func (l *Lookuper) fetchBatch(ctx context.Context, keyCols []int, keys [][]types.Value, add func(i int, row []types.Value)) error {
	n := 2
	for n < len(keys) {
		n *= 2
	}
	s, err := l.prepared(ctx, keyCols, n)
	if err != nil {
		return err
	}
	args := make([]any, n*len(keyCols))
	for j, key := range keys {
		for i, v := range key {
			if args[j*len(keyCols)+i], err = param(v); err != nil {
				return lookupcache.Permanent(fmt.Errorf("jdbc table %s: column '%s': %w", l.name, l.cfg.cols[keyCols[i]], err))
			}
		}
	}
	rs, err := s.st.QueryContext(ctx, args...)
	if err != nil {
		return fmt.Errorf("jdbc table %s: lookup failed: %w", l.name, err)
	}
	defer rs.Close()
	err = l.scanLed(rs, &s.checked, true, func(pos int, row []types.Value) error {
		if pos < 0 || pos >= len(keys) {
			return fmt.Errorf("a batch lookup returned a row for key %d of %d", pos, len(keys))
		}
		add(pos, append([]types.Value(nil), row...))
		return nil
	})
	if err != nil && !lookupcache.IsPermanent(err) {
		err = fmt.Errorf("jdbc table %s: lookup failed: %w", l.name, err)
	}
	return err
}

func (l *Lookuper) fetch(ctx context.Context, keyCols []int, key []types.Value, dst [][]types.Value) ([][]types.Value, error) {
	s, err := l.prepared(ctx, keyCols, 0)
	if err != nil {
		return dst, err
	}
	args := make([]any, len(key))
	for i, v := range key {
		if args[i], err = param(v); err != nil {
			return dst, lookupcache.Permanent(fmt.Errorf("jdbc table %s: column '%s': %w", l.name, l.cfg.cols[keyCols[i]], err))
		}
	}
	rs, err := s.st.QueryContext(ctx, args...)
	if err != nil {
		return dst, fmt.Errorf("jdbc table %s: lookup failed: %w", l.name, err)
	}
	defer rs.Close()
	err = l.scan(rs, &s.checked, func(row []types.Value) error {
		dst = append(dst, append([]types.Value(nil), row...))
		return nil
	})
	if err != nil && !lookupcache.IsPermanent(err) {
		err = fmt.Errorf("jdbc table %s: lookup failed: %w", l.name, err)
	}
	return dst, err
}

// Close implements connector.LookupSource.
func (l *Lookuper) Close() error {
	l.mu.Lock()
	for _, s := range l.stmts {
		s.st.Close()
	}
	clear(l.stmts)
	l.mu.Unlock()
	return l.db.Close()
}

var (
	_ connector.LookupFactory    = Factory{}
	_ connector.FullSource       = (*FullSource)(nil)
	_ connector.KeyLookuper      = (*Lookuper)(nil)
	_ connector.BatchKeyLookuper = (*Lookuper)(nil)
	_ lookupcache.Cached         = (*Lookuper)(nil)
)
