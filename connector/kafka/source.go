package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/types"
)

// pollWait is the longest a Read waits for records before it returns with
// none, so that the engine can advance processing time and notice idle
// partitions.
const pollWait = 100 * time.Millisecond

// Startup and bounded modes.
const (
	modeEarliest  = "earliest-offset"
	modeLatest    = "latest-offset"
	modeGroup     = "group-offsets"
	modeTimestamp = "timestamp"
	modeSpecific  = "specific-offsets"
	modeUnbounded = "unbounded"
)

// position is where reading starts or ends: a mode and its argument.
type position struct {
	mode     string
	millis   int64           // timestamp mode
	specific map[int32]int64 // specific-offsets mode
}

// CreateSource implements connector.SourceFactory.
func (Factory) CreateSource(t connector.Table, env connector.Env) (connector.Source, error) {
	return createSource(t, env, false)
}

// CreateSource implements connector.SourceFactory: the topic is read as a
// changelog keyed by the primary key.
func (UpsertFactory) CreateSource(t connector.Table, env connector.Env) (connector.Source, error) {
	return createSource(t, env, true)
}

func createSource(t connector.Table, env connector.Env, upsert bool) (*Source, error) {
	c, err := parseConfig(t, env, upsert)
	if err != nil {
		return nil, err
	}
	s := &Source{cfg: c, table: t}
	if s.meta, err = metadataFuncs(t); err != nil {
		return nil, err
	}
	if err := s.parsePositions(t.Options); err != nil {
		return nil, err
	}
	if s.policy, err = connector.NewErrorPolicy(t, c.valPrefix); err != nil {
		return nil, err
	}
	cl, err := c.newClient()
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), metadataTimeout)
	defer cancel()
	if s.parts, err = c.listPartitions(ctx, kadm.NewClient(cl)); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Source) parsePositions(o connector.Options) error {
	c := s.cfg
	def := modeEarliest
	if c.groupID != "" {
		def = modeGroup
	}
	s.start.mode = strings.ToLower(strings.TrimSpace(o.String("scan.startup.mode", def)))
	if c.upsert {
		// upsert-kafka reads the whole changelog.
		s.start.mode = modeEarliest
	}
	switch s.start.mode {
	case modeEarliest, modeLatest:
	case modeGroup:
		if c.groupID == "" {
			return errors.New("'scan.startup.mode' = 'group-offsets' requires option 'properties.group.id'")
		}
	case modeTimestamp:
		if _, ok := o["scan.startup.timestamp-millis"]; !ok {
			return errors.New("'scan.startup.mode' = 'timestamp' requires option 'scan.startup.timestamp-millis'")
		}
		ms, err := o.Int("scan.startup.timestamp-millis", 0)
		if err != nil {
			return err
		}
		s.start.millis = ms
	case modeSpecific:
		v, err := o.Required("scan.startup.specific-offsets")
		if err != nil {
			return fmt.Errorf("'scan.startup.mode' = 'specific-offsets': %w", err)
		}
		if len(c.topics) != 1 {
			return errors.New("'scan.startup.mode' = 'specific-offsets' needs exactly one topic in option 'topic'")
		}
		if s.start.specific, err = parseSpecificOffsets("scan.startup.specific-offsets", v); err != nil {
			return err
		}
	default:
		return fmt.Errorf("option 'scan.startup.mode': unsupported value '%s' (expected earliest-offset, latest-offset, group-offsets, timestamp or specific-offsets)", o["scan.startup.mode"])
	}

	s.end.mode = strings.ToLower(strings.TrimSpace(o.String("scan.bounded.mode", modeUnbounded)))
	switch s.end.mode {
	case modeUnbounded, modeLatest:
	case modeGroup:
		if c.groupID == "" {
			return errors.New("'scan.bounded.mode' = 'group-offsets' requires option 'properties.group.id'")
		}
	case modeTimestamp:
		if _, ok := o["scan.bounded.timestamp-millis"]; !ok {
			return errors.New("'scan.bounded.mode' = 'timestamp' requires option 'scan.bounded.timestamp-millis'")
		}
		ms, err := o.Int("scan.bounded.timestamp-millis", 0)
		if err != nil {
			return err
		}
		s.end.millis = ms
	case modeSpecific:
		v, err := o.Required("scan.bounded.specific-offsets")
		if err != nil {
			return fmt.Errorf("'scan.bounded.mode' = 'specific-offsets': %w", err)
		}
		if len(c.topics) != 1 {
			return errors.New("'scan.bounded.mode' = 'specific-offsets' needs exactly one topic in option 'topic'")
		}
		if s.end.specific, err = parseSpecificOffsets("scan.bounded.specific-offsets", v); err != nil {
			return err
		}
	default:
		return fmt.Errorf("option 'scan.bounded.mode': unsupported value '%s' (expected unbounded, latest-offset, group-offsets, timestamp or specific-offsets)", o["scan.bounded.mode"])
	}
	return nil
}

// Source is a Kafka table being read: one partition per partition of its
// topics.
type Source struct {
	cfg    *config
	table  connector.Table
	parts  []partition
	meta   []metaFunc
	policy *connector.ErrorPolicy
	start  position
	end    position

	mu   sync.Mutex
	open int // open readers; the policy's dead-letter file closes with the last
}

// Partitions implements connector.Source: one per Kafka partition.
func (s *Source) Partitions() int { return len(s.parts) }

// Bounded implements connector.Source: only with a 'scan.bounded.mode'.
func (s *Source) Bounded() bool { return s.end.mode != modeUnbounded }

// TopicPartitions returns the topic and Kafka partition ("topic/2") that
// each connector partition reads, in partition order.
func (s *Source) TopicPartitions() []string {
	out := make([]string, len(s.parts))
	for i, p := range s.parts {
		out[i] = p.topic + "/" + strconv.Itoa(int(p.part))
	}
	return out
}

// Skipped returns the malformed records skipped by all readers so far.
func (s *Source) Skipped() int64 { return s.policy.Skipped() }

// Open implements connector.Source: it resolves the partition's start (and
// end) offset and starts fetching.
func (s *Source) Open(ctx context.Context, p int) (connector.Reader, error) {
	return s.openAt(ctx, p, -1)
}

// OpenAfter implements connector.Resumer: the partition is read from the
// record after offset, where a job's checkpoint left it.
func (s *Source) OpenAfter(ctx context.Context, p int, offset int64) (connector.Reader, error) {
	if !s.cfg.changelog {
		return s.openAt(ctx, p, offset+1)
	}
	// offset is a row's (connector.ChangelogOffset): read its record
	// again if some of its rows were not covered, and skip those that were.
	r, err := s.openAt(ctx, p, connector.ChangelogResume(offset))
	if err != nil {
		return nil, err
	}
	r.(*Reader).skipTo = offset
	return r, nil
}

// ResumeOffset returns the Kafka offset from which partition reading
// goes on after a position, the origin offset of the last row a
// checkpoint covered: the next record's, or for a changelog format
// (whose rows number the rows of each record) the first record not wholly
// covered. Cluster mode commits it as the group's offset.
func (s *Source) ResumeOffset(pos int64) int64 {
	if s.cfg.changelog {
		return connector.ChangelogResume(pos)
	}
	return pos + 1
}

// openAt opens partition p at from, or at the table's start position when
// from is negative.
func (s *Source) openAt(ctx context.Context, p int, from int64) (connector.Reader, error) {
	if p < 0 || p >= len(s.parts) {
		return nil, fmt.Errorf("kafka: partition %d out of range [0, %d)", p, len(s.parts))
	}
	c := s.cfg
	tp := s.parts[p]
	r := &Reader{
		src:    s,
		part:   int32(p),
		tp:     tp,
		phys:   c.schema.Len(),
		width:  c.schema.Len() + len(s.meta),
		end:    -1,
		upsert: c.upsert,
	}
	var err error
	if r.valDec, err = c.valFormat.NewDecoder(c.valSchema, c.valOpts); err != nil {
		return nil, err
	}
	if !c.identityValue() {
		r.valScratch = make([]types.Value, len(c.valIdx))
	}
	r.skipTo = -1
	if cd, ok := r.valDec.(format.ChangelogDecoder); ok {
		// The decoder fills the first len(valIdx) values of each row,
		// which add then moves to their columns.
		r.changelog = connector.NewChangelogRows(cd, r.width, len(c.valIdx))
	}
	if c.keyFormat != nil && (!c.valueHasKey || c.upsert) {
		if r.keyDec, err = c.keyFormat.NewDecoder(c.keySchema, c.keyOpts); err != nil {
			return nil, err
		}
		r.keyScratch = make([]types.Value, len(c.keyIdx))
	}
	if c.upsert {
		r.seen = make(map[string]struct{})
	}
	iso := kgo.ReadUncommitted()
	if c.props.readCommitted {
		iso = kgo.ReadCommitted()
	}
	opts := append([]kgo.Opt{kgo.FetchIsolationLevel(iso), kgo.KeepControlRecords()}, c.props.consumer...)
	if r.cl, err = c.newClient(opts...); err != nil {
		return nil, err
	}
	octx, cancel := context.WithTimeout(ctx, metadataTimeout)
	defer cancel()
	adm := kadm.NewClient(r.cl)
	start := from
	if from < 0 {
		start, err = s.offset(octx, adm, tp, s.start, false)
	}
	if err == nil && s.Bounded() {
		r.end, err = s.offset(octx, adm, tp, s.end, true)
	}
	if err != nil {
		r.cl.Close()
		return nil, fmt.Errorf("topic %s partition %d: %w", tp.topic, tp.part, err)
	}
	r.next = start
	if r.end < 0 || start < r.end {
		r.cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{tp.topic: {tp.part: kgo.NewOffset().At(start)}})
	}
	s.mu.Lock()
	s.open++
	s.mu.Unlock()
	return r, nil
}

// offset resolves a position to an offset of partition tp. An end position
// of the partitions not listed in specific offsets is the latest offset.
func (s *Source) offset(ctx context.Context, adm *kadm.Client, tp partition, pos position, isEnd bool) (int64, error) {
	c := s.cfg
	list := func(what string, f func(context.Context, ...string) (kadm.ListedOffsets, error)) (int64, error) {
		lo, err := f(ctx, tp.topic)
		if err != nil {
			return 0, fmt.Errorf("cannot list %s offsets: %w", what, err)
		}
		o, ok := lo.Lookup(tp.topic, tp.part)
		if !ok {
			return 0, fmt.Errorf("cannot list %s offsets: no answer for the partition", what)
		}
		if o.Err != nil {
			return 0, fmt.Errorf("cannot list %s offsets: %w", what, o.Err)
		}
		return o.Offset, nil
	}
	latest := func() (int64, error) {
		if c.props.readCommitted {
			return list("latest", adm.ListCommittedOffsets)
		}
		return list("latest", adm.ListEndOffsets)
	}
	switch pos.mode {
	case modeEarliest:
		return list("earliest", adm.ListStartOffsets)
	case modeLatest:
		return latest()
	case modeTimestamp:
		return list("timestamp", func(ctx context.Context, topics ...string) (kadm.ListedOffsets, error) {
			return adm.ListOffsetsAfterMilli(ctx, pos.millis, topics...)
		})
	case modeSpecific:
		if o, ok := pos.specific[tp.part]; ok {
			return o, nil
		}
		if isEnd {
			return latest()
		}
		if c.groupID == "" {
			return list("earliest", adm.ListStartOffsets)
		}
	}
	// Group offsets (or a partition that specific offsets leave out).
	resp, err := adm.FetchOffsets(ctx, c.groupID)
	if errors.Is(err, kerr.GroupIDNotFound) {
		resp, err = nil, nil // a group that never committed
	}
	if err != nil {
		return 0, fmt.Errorf("cannot fetch the committed offsets of group '%s': %w", c.groupID, err)
	}
	if o, ok := resp.Lookup(tp.topic, tp.part); ok && o.Err == nil && o.At >= 0 {
		return o.At, nil
	}
	if isEnd {
		return latest()
	}
	switch c.props.autoReset {
	case "latest":
		return latest()
	case "none":
		return 0, fmt.Errorf("group '%s' has no committed offset and 'properties.auto.offset.reset' is 'none'", c.groupID)
	}
	return list("earliest", adm.ListStartOffsets)
}

// Reader reads one Kafka partition.
type Reader struct {
	src    *Source
	part   int32 // the connector partition: the rows' Origin.Part
	tp     partition
	cl     *kgo.Client
	phys   int // physical columns
	width  int // physical and metadata columns
	upsert bool

	next int64 // the offset after the last record seen
	end  int64 // the offset to stop at; -1 when unbounded

	valDec     format.Decoder
	valScratch []types.Value // the value's columns, when not the whole row
	// changelog decodes a changelog format's records, each into any
	// number of rows; skipTo drops the rows of a resumed partition up to
	// that origin offset (a record whose rows a checkpoint partly covers).
	changelog  *connector.ChangelogRows
	skipTo     int64
	keyDec     format.Decoder
	keyScratch []types.Value

	// seen holds the key of every row an upsert-kafka reader has produced
	// and not deleted since, to tell +I from +U and to drop tombstones of
	// unknown keys.
	seen map[string]struct{}

	skipped int64
	closed  bool
}

// Skipped implements connector.Stats for this partition.
func (r *Reader) Skipped() int64 { return r.skipped }

// Read implements connector.Reader.
func (r *Reader) Read(ctx context.Context, b *types.Batch, max int) error {
	if r.closed {
		return errors.New("kafka: read from a closed reader")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if r.end >= 0 && r.next >= r.end {
		return io.EOF
	}
	pctx, cancel := context.WithTimeout(ctx, pollWait)
	fs := r.cl.PollRecords(pctx, max)
	cancel()
	for _, fe := range fs.Errors() {
		if err := r.fetchError(ctx, fe.Err); err != nil {
			return err
		}
	}
	for it := fs.RecordIter(); !it.Done(); {
		rec := it.Next()
		if r.end >= 0 && rec.Offset >= r.end {
			r.next = r.end
			continue
		}
		r.next = rec.Offset + 1
		if rec.Attrs.IsControl() {
			continue
		}
		if err := r.add(b, rec); err != nil {
			return err
		}
	}
	if r.end >= 0 && r.next >= r.end && len(b.Rows) == 0 {
		return io.EOF
	}
	return nil
}

// fetchError decides whether a fetch error ends the read: the client
// retries what can be retried, so only the others are returned.
func (r *Reader) fetchError(ctx context.Context, err error) error {
	var loss *kgo.ErrDataLoss
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return ctx.Err() // our poll's timeout, unless the caller's context ended
	case errors.As(err, &loss), kerr.IsRetriable(err):
		return nil
	}
	return fmt.Errorf("cannot fetch topic %s partition %d: %w", r.tp.topic, r.tp.part, err)
}

// where names a record for error messages.
func (r *Reader) where(rec *kgo.Record) string {
	return "topic " + rec.Topic + " partition " + strconv.Itoa(int(rec.Partition)) + " offset " + strconv.FormatInt(rec.Offset, 10)
}

// addChangelog appends the rows of rec, a changelog format's record, to b,
// or applies the error policy.
func (r *Reader) addChangelog(b *types.Batch, rec *kgo.Record) error {
	c := r.src.cfg
	first, err := r.changelog.Decode(b, rec.Value, r.part, rec.Offset)
	if err != nil {
		return r.handle(rec, rec.Value, err)
	}
	if r.keyDec != nil && rec.Key != nil && !c.valueHasKey && len(b.Rows) > first {
		clear(r.keyScratch)
		if err := r.keyDec.Decode(rec.Key, r.keyScratch); err != nil {
			for i := first; i < len(b.Rows); i++ {
				clear(b.Rows[i].Vals)
			}
			b.Rows = b.Rows[:first]
			return r.handle(rec, rec.Key, fmt.Errorf("key: %w", err))
		}
	}
	keep := b.Rows[:first]
	for _, row := range b.Rows[first:] {
		if row.Origin.Offset <= r.skipTo {
			clear(row.Vals)
			continue
		}
		vals := row.Vals
		if r.valScratch != nil {
			// Move the value's fields from the front to their columns.
			copy(r.valScratch, vals[:len(c.valIdx)])
			clear(vals[:len(c.valIdx)])
			for i, j := range c.valIdx {
				vals[j] = r.valScratch[i]
			}
			clear(r.valScratch)
		}
		if r.keyDec != nil && rec.Key != nil && !c.valueHasKey {
			for i, j := range c.keyIdx {
				vals[j] = r.keyScratch[i]
			}
		}
		for i, f := range r.src.meta {
			vals[r.phys+i] = f(rec)
		}
		keep = append(keep, row)
	}
	b.Rows = keep
	return nil
}

// add appends the row of rec to b, or applies the error policy.
func (r *Reader) add(b *types.Batch, rec *kgo.Record) error {
	kind := types.Insert
	known := false
	if r.upsert {
		if rec.Key == nil {
			return r.malformed(b, rec, rec.Value, errors.New("the record has no key (upsert-kafka records are keyed by the primary key)"))
		}
		_, known = r.seen[string(rec.Key)]
		switch {
		case rec.Value == nil && !known:
			return nil // a tombstone of a key never seen (or deleted already)
		case rec.Value == nil:
			kind = types.Delete
		case known:
			kind = types.UpdateAfter
		}
	} else if rec.Value == nil {
		return nil // a tombstone means nothing to an append-only table
	} else if r.changelog != nil {
		return r.addChangelog(b, rec)
	}
	c := r.src.cfg
	vals := b.AddRow(kind, types.Origin{Part: r.part, Offset: rec.Offset}, r.width)
	if rec.Value != nil {
		if r.valScratch == nil {
			if err := r.valDec.Decode(rec.Value, vals[:r.phys]); err != nil {
				return r.malformed(b, rec, rec.Value, err)
			}
		} else {
			clear(r.valScratch)
			if err := r.valDec.Decode(rec.Value, r.valScratch); err != nil {
				return r.malformed(b, rec, rec.Value, err)
			}
			for i, j := range c.valIdx {
				vals[j] = r.valScratch[i]
			}
		}
	}
	if r.keyDec != nil && rec.Key != nil && (rec.Value == nil || !c.valueHasKey) {
		clear(r.keyScratch)
		if err := r.keyDec.Decode(rec.Key, r.keyScratch); err != nil {
			return r.malformed(b, rec, rec.Key, fmt.Errorf("key: %w", err))
		}
		for i, j := range c.keyIdx {
			vals[j] = r.keyScratch[i]
		}
	}
	for i, f := range r.src.meta {
		vals[r.phys+i] = f(rec)
	}
	if r.upsert {
		switch {
		case kind == types.Delete:
			delete(r.seen, string(rec.Key))
		case !known:
			r.seen[string(rec.Key)] = struct{}{}
		}
	}
	return nil
}

// malformed drops the row just added for rec, if any, and applies the
// table's error policy to data.
func (r *Reader) malformed(b *types.Batch, rec *kgo.Record, data []byte, err error) error {
	if n := len(b.Rows); n > 0 && b.Rows[n-1].Origin == (types.Origin{Part: r.part, Offset: rec.Offset}) {
		clear(b.Rows[n-1].Vals)
		b.Rows = b.Rows[:n-1]
	}
	return r.handle(rec, data, err)
}

// handle applies the table's error policy to data, a part of rec that
// could not be decoded.
func (r *Reader) handle(rec *kgo.Record, data []byte, err error) error {
	if herr := r.src.policy.Handle(r.where(rec), data, err); herr != nil {
		return herr
	}
	r.skipped++
	return nil
}

// Close implements connector.Reader.
func (r *Reader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	r.cl.Close()
	s := r.src
	s.mu.Lock()
	s.open--
	last := s.open == 0
	s.mu.Unlock()
	if last {
		return s.policy.Close()
	}
	return nil
}
