package redis

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/connector/lookupcache"
	"github.com/sluicesql/sluice/connector/redact"
	"github.com/sluicesql/sluice/internal/resp"
	"github.com/sluicesql/sluice/types"
)

// Factory builds redis lookup sources and sinks.
type Factory struct{}

// New returns the redis connector factory.
func New() Factory { return Factory{} }

// Name implements connector.Factory.
func (Factory) Name() string { return "redis" }

// Option keys.
const (
	optURL       = "url"
	optHost      = "host"
	optPort      = "port"
	optUser      = "username"
	optPassword  = "password"
	optDatabase  = "database"
	optDataType  = "data-type"
	optPrefix    = "key-prefix"
	optSeparator = "key-separator"
	optFormat    = "format"
	optTimeout   = "timeout"
)

// layout is how a table's rows lie in Redis, for the lookup and the sink
// alike: the Redis key of a row and what its value holds.
type layout struct {
	name      string
	schema    types.Schema
	hash      bool
	prefix    string
	sep       string
	pk        []int // primary key columns, in declared order; nil: none
	valueCol  int   // string values without a format: the value column
	format    format.Factory
	fmtOpts   map[string]string
	fieldCols map[string]int // hash fields by column name
}

// parseLayout reads a table's options. Every option of the connector is
// known to both the lookup and the sink, so that one table can be both.
func parseLayout(t connector.Table, env connector.Env) (*layout, error) {
	if err := connector.RejectMetadata("redis", t); err != nil {
		return nil, err
	}
	fmtName := t.Options[optFormat]
	known := append([]string{"connector", optURL, optHost, optPort, optUser, optPassword, optDatabase,
		optDataType, optPrefix, optSeparator, optFormat, optTimeout}, lookupcache.PartialOptions()...)
	known = append(known, connector.TLSOptions()...)
	known = append(known, sinkOptions...)
	var prefixes []string
	if fmtName != "" {
		prefixes = append(prefixes, fmtName+".")
	}
	if err := t.Options.CheckKnown("redis", known, prefixes...); err != nil {
		return nil, err
	}
	l := &layout{
		name:     t.Name,
		schema:   t.Schema,
		prefix:   t.Options[optPrefix],
		sep:      t.Options.String(optSeparator, ":"),
		valueCol: -1,
	}
	for _, k := range t.PrimaryKey {
		i := t.Schema.Index(k)
		if i < 0 {
			return nil, fmt.Errorf("redis: primary key column '%s' is not a physical column", k)
		}
		l.pk = append(l.pk, i)
	}
	switch dt := strings.ToLower(t.Options.String(optDataType, "hash")); dt {
	case "hash":
		l.hash = true
		if fmtName != "" {
			return nil, fmt.Errorf("redis: option '%s' applies to 'data-type' = 'string' only", optFormat)
		}
		l.fieldCols = make(map[string]int, t.Schema.Len())
		for i, c := range t.Schema.Columns {
			l.fieldCols[c.Name] = i
		}
	case "string":
		if fmtName != "" {
			if env.Formats == nil {
				return nil, errors.New("redis: no format registry")
			}
			f, err := env.Formats.Lookup(fmtName)
			if err != nil {
				return nil, err
			}
			if format.IsChangelog(f) {
				return nil, fmt.Errorf("redis: format '%s' is a changelog format; a value is one row", fmtName)
			}
			l.format, l.fmtOpts = f, t.Options.WithPrefix(fmtName+".")
			break
		}
		if len(l.pk) == 0 || len(l.pk) != t.Schema.Len()-1 {
			return nil, fmt.Errorf("redis: 'data-type' = 'string' without a 'format' needs a PRIMARY KEY and exactly one other column, the value")
		}
		for i := range t.Schema.Columns {
			if !slices.Contains(l.pk, i) {
				l.valueCol = i
			}
		}
	default:
		return nil, fmt.Errorf("redis: option '%s': unsupported value '%s' (expected 'hash' or 'string')", optDataType, dt)
	}
	return l, nil
}

// Lookuper looks rows up in Redis (a connector.KeyLookuper).
type Lookuper struct {
	*lookupcache.Lookuper
	*layout
	client *resp.Client

	decMu sync.Mutex
	dec   format.Decoder // string values with a format
}

// CreateLookup implements connector.LookupFactory. Its errors, and the
// lookups', quote no password (the option's or the URL's).
func (Factory) CreateLookup(t connector.Table, env connector.Env) (connector.LookupSource, error) {
	l, err := newLookuper(t, env)
	if err != nil {
		return nil, redact.Error(err, redact.Secrets(t.Options)...)
	}
	return l, nil
}

func newLookuper(t connector.Table, env connector.Env) (*Lookuper, error) {
	lay, err := parseLayout(t, env)
	if err != nil {
		return nil, err
	}
	settings, err := lookupcache.ParseOptions(t.Options)
	if err != nil {
		return nil, err
	}
	if settings.Mode == lookupcache.Full {
		return nil, fmt.Errorf("redis: option '%s' = 'FULL' is not supported: Redis tables are looked up by key ('NONE' or 'PARTIAL')", lookupcache.OptCache)
	}
	if _, err := parseSinkOptions(t.Options); err != nil {
		return nil, err
	}
	opts, err := clientOptions(t.Options)
	if err != nil {
		return nil, err
	}
	l := &Lookuper{layout: lay}
	if lay.format != nil {
		if l.dec, err = lay.format.NewDecoder(t.Schema, lay.fmtOpts); err != nil {
			return nil, err
		}
	}
	l.client = resp.New(*opts)
	secrets := redact.Secrets(t.Options)
	fetch := func(ctx context.Context, keyCols []int, key []types.Value, dst [][]types.Value) ([][]types.Value, error) {
		rows, err := l.fetch(ctx, keyCols, key, dst)
		return rows, redact.Error(err, secrets...)
	}
	fetchBatch := func(ctx context.Context, keyCols []int, keys [][]types.Value, add func(i int, row []types.Value)) error {
		return redact.Error(l.fetchBatch(ctx, keyCols, keys, add), secrets...)
	}
	l.Lookuper = lookupcache.NewLookuper(settings, fetch, lookupcache.EnvClock(env.Now)).WithBatch(fetchBatch, maxBatch)
	return l, nil
}

// clientOptions reads where the server is: 'url' (redis://... or
// rediss://...) or 'host' and 'port', the credentials and TLS (on with
// rediss://, or with 'host' and a 'tls.*' option).
func clientOptions(o connector.Options) (*resp.Options, error) {
	var opts *resp.Options
	secure := false
	if u, ok := o[optURL]; ok {
		if _, ok := o[optHost]; ok {
			return nil, fmt.Errorf("redis: set either '%s' or '%s', not both", optURL, optHost)
		}
		var err error
		if opts, err = resp.ParseURL(u); err != nil {
			return nil, fmt.Errorf("redis: option '%s' = '%s': %w", optURL, redact.URL(u), err)
		}
		if secure = opts.TLS != nil; !secure {
			if err := o.RejectTLS(fmt.Sprintf("option '%s' = '%s' is plain Redis (rediss:// is Redis over TLS)", optURL, redact.URL(u))); err != nil {
				return nil, fmt.Errorf("redis: %w", err)
			}
		}
	} else {
		host, err := o.Required(optHost)
		if err != nil {
			return nil, fmt.Errorf("redis: %w (or '%s')", err, optURL)
		}
		port, err := o.Int(optPort, 6379)
		if err != nil {
			return nil, err
		}
		if port < 1 || port > 65535 {
			return nil, fmt.Errorf("redis: option '%s' must be a port from 1 to 65535, not %d", optPort, port)
		}
		opts = &resp.Options{Addr: net.JoinHostPort(host, strconv.FormatInt(port, 10))}
	}
	host, _, _ := net.SplitHostPort(opts.Addr)
	var err error
	if opts.TLS, err = o.ClientTLS(host, secure); err != nil {
		return nil, fmt.Errorf("redis: %w", err)
	}
	if v, ok := o[optUser]; ok {
		opts.Username = v
	}
	if v, ok := o[optPassword]; ok {
		opts.Password = v
	}
	if _, ok := o[optDatabase]; ok {
		db, err := o.Int(optDatabase, 0)
		if err != nil {
			return nil, err
		}
		if db < 0 || db > math.MaxInt32 {
			return nil, fmt.Errorf("redis: option '%s' must be a database number (0 or more), not %d", optDatabase, db)
		}
		opts.DB = int(db)
	}
	timeout, err := o.Duration(optTimeout, 5*time.Second)
	if err != nil {
		return nil, err
	}
	opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout = timeout, timeout, timeout
	// Retries are the lookup's ('lookup.max-retries'): the client makes
	// none.
	opts.PoolSize = 4
	return opts, nil
}

// Key returns the Redis key of a lookup by the columns keyCols, and
// which of those columns (by position in keyCols) it does not cover and
// must be checked on the row read.
func (l *Lookuper) Key(keyCols []int, key []types.Value) (string, []int, error) {
	var b strings.Builder
	b.WriteString(l.prefix)
	var rest []int
	if l.pk != nil {
		for n, c := range l.pk {
			i := slices.Index(keyCols, c)
			if i < 0 {
				names := make([]string, len(l.pk))
				for j, p := range l.pk {
					names[j] = l.schema.Columns[p].Name
				}
				return "", nil, lookupcache.Permanent(fmt.Errorf("redis table %s can only be looked up by its primary key (%s)", l.name, strings.Join(names, ", ")))
			}
			if n > 0 {
				b.WriteString(l.sep)
			}
			b.WriteString(keyText(key[i], l.schema.Columns[c].Type))
		}
		for i, c := range keyCols {
			if !slices.Contains(l.pk, c) {
				rest = append(rest, i)
			}
		}
		return b.String(), rest, nil
	}
	order := make([]int, len(keyCols))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return keyCols[a] - keyCols[b] })
	for n, i := range order {
		if n > 0 {
			b.WriteString(l.sep)
		}
		b.WriteString(keyText(key[i], l.schema.Columns[keyCols[i]].Type))
	}
	return b.String(), nil, nil
}

// keyText is how a key value appears in a Redis key: as the column's
// type prints it (a DECIMAL at the column's scale).
func keyText(v types.Value, t types.Type) string {
	switch k := v.Kind(); {
	case k.IsString() || k.IsBinary():
		return v.Str()
	case k.IsInteger():
		return strconv.FormatInt(v.Int(), 10)
	case k == types.KindDecimal && t.Kind == types.KindDecimal:
		return types.DecimalString(types.Rescale(v, t.Scale))
	}
	return types.FormatValue(v, types.Type{Kind: v.Kind(), Precision: t.Precision, Scale: t.Scale})
}

func (l *Lookuper) fetch(ctx context.Context, keyCols []int, key []types.Value, dst [][]types.Value) ([][]types.Value, error) {
	err := l.fetchBatch(ctx, keyCols, [][]types.Value{key}, func(_ int, row []types.Value) { dst = append(dst, row) })
	return dst, err
}

// maxBatch is the most keys one pipeline asks for.
const maxBatch = 512

// fetchBatch implements lookupcache.FetchBatch: one pipeline of HGETALL
// or GET commands, a round trip for all the keys.
func (l *Lookuper) fetchBatch(ctx context.Context, keyCols []int, keys [][]types.Value, add func(i int, row []types.Value)) error {
	rkeys := make([]string, len(keys))
	rests := make([][]int, len(keys))
	for j, key := range keys {
		if len(keyCols) != len(key) {
			return lookupcache.Permanent(fmt.Errorf("redis table %s: %d key columns, %d values", l.name, len(keyCols), len(key)))
		}
		var err error
		if rkeys[j], rests[j], err = l.Key(keyCols, key); err != nil {
			return err
		}
	}
	cmds := make([][]string, len(rkeys))
	for j, k := range rkeys {
		cmds[j] = l.command(k)
	}
	replies, err := l.client.Pipeline(ctx, cmds)
	if err != nil {
		err = fmt.Errorf("redis table %s: %s %s: %w", l.name, cmds[0][0], rkeys[0], connector.ClassifyTLS(err))
		var te *connector.TLSError
		if errors.As(err, &te) {
			return lookupcache.Permanent(err)
		}
		return err
	}
	for j, r := range replies {
		row, err := l.decode(r, keyCols, keys[j], rkeys[j], rests[j])
		if err != nil {
			return err
		}
		if row != nil {
			add(j, row)
		}
	}
	return nil
}

// command is the lookup of the Redis key rkey.
func (l *Lookuper) command(rkey string) []string {
	if l.hash {
		return []string{"HGETALL", rkey}
	}
	return []string{"GET", rkey}
}

// decode returns the row that the reply r (to the lookup of key, whose
// Redis key is rkey) holds, or nil if it holds none or one whose key
// columns rest (those rkey does not cover) differ from key's.
func (l *Lookuper) decode(r resp.Reply, keyCols []int, key []types.Value, rkey string, rest []int) ([]types.Value, error) {
	row := make([]types.Value, l.schema.Len())
	var err error
	if l.hash {
		fields, err := r.Map()
		if err != nil {
			return nil, fmt.Errorf("redis table %s: HGETALL %s: %w", l.name, rkey, err)
		}
		if len(fields) == 0 {
			return nil, nil
		}
		for f, s := range fields {
			i, ok := l.fieldCols[f]
			if !ok {
				continue
			}
			if row[i], err = parse(s, l.schema.Columns[i].Type); err != nil {
				return nil, lookupcache.Permanent(fmt.Errorf("redis table %s: key %s field '%s': %w", l.name, rkey, f, err))
			}
		}
	} else {
		s, err := r.String()
		if errors.Is(err, resp.Nil) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("redis table %s: GET %s: %w", l.name, rkey, err)
		}
		if l.dec != nil {
			l.decMu.Lock()
			err = l.dec.Decode([]byte(s), row)
			l.decMu.Unlock()
		} else {
			row[l.valueCol], err = parse(s, l.schema.Columns[l.valueCol].Type)
		}
		if err != nil {
			return nil, lookupcache.Permanent(fmt.Errorf("redis table %s: key %s: %w", l.name, rkey, err))
		}
	}
	// Key columns the value does not carry come from the key.
	for i, c := range keyCols {
		if row[c].IsNull() {
			if row[c], err = asColumn(key[i], l.schema.Columns[c].Type); err != nil {
				return nil, lookupcache.Permanent(fmt.Errorf("redis table %s: key column '%s': %w", l.name, l.schema.Columns[c].Name, err))
			}
		}
	}
	for _, i := range rest {
		if types.Compare(row[keyCols[i]], key[i]) != 0 {
			return nil, nil
		}
	}
	return row, nil
}

// parse reads a Redis string as a value of type t, as CAST does.
func parse(s string, t types.Type) (types.Value, error) {
	return types.Cast(types.StringValue(s), types.String, t)
}

// asColumn converts a key value to its column's type.
func asColumn(v types.Value, t types.Type) (types.Value, error) {
	from := types.Type{Kind: v.Kind(), Precision: types.MaxLength}
	switch {
	case v.Kind() == types.KindDecimal:
		from = types.Decimal(types.MaxDecimalPrecision, v.Scale())
	case v.Kind().IsTimestamp() || v.Kind() == types.KindTime:
		from.Precision = 9
	}
	return types.Cast(v, from, t)
}

// Close implements connector.LookupSource.
func (l *Lookuper) Close() error { return l.client.Close() }

var (
	_ connector.LookupFactory    = Factory{}
	_ connector.KeyLookuper      = (*Lookuper)(nil)
	_ connector.BatchKeyLookuper = (*Lookuper)(nil)
	_ lookupcache.Cached         = (*Lookuper)(nil)
)
