package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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
	s := &Source{cfg: c, table: t, logf: env.Log}
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
	adm := kadm.NewClient(cl)
	if err := c.waitBrokers(context.Background(), func(ctx context.Context) (err error) {
		s.parts, err = c.listPartitions(ctx, adm)
		return err
	}); err != nil {
		return nil, err
	}
	if err := s.checkSpecific("scan.startup.specific-offsets", s.start.specific); err != nil {
		return nil, err
	}
	if err := s.checkSpecific("scan.bounded.specific-offsets", s.end.specific); err != nil {
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
		ms, err := timestampMillis(o, "scan.startup.timestamp-millis")
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
	// As in Flink, whose KafkaSourceBuilder sets the consumer's
	// auto.offset.reset from the startup mode: earliest for
	// earliest-offset and specific-offsets, latest for latest-offset and
	// timestamp, and for group-offsets the property itself.
	switch s.start.mode {
	case modeEarliest, modeSpecific:
		s.reset = "earliest"
	case modeLatest, modeTimestamp:
		s.reset = "latest"
	}
	s.resetWhy = fmt.Sprintf("'scan.startup.mode' = '%s'", s.start.mode)
	if c.upsert {
		s.resetWhy = "'upsert-kafka' (which reads the whole log)"
	}
	if s.start.mode == modeGroup {
		s.reset = c.props.autoReset
		s.resetWhy = fmt.Sprintf("'properties.auto.offset.reset' = '%s'", s.reset)
		if _, ok := o["properties.auto.offset.reset"]; !ok {
			s.resetWhy += " (the default)"
		}
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
		ms, err := timestampMillis(o, "scan.bounded.timestamp-millis")
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

// maxMillis is 9999-12-31 23:59:59.999 UTC in milliseconds, the last
// instant of Flink's timestamp range.
const maxMillis = 253402300799999

// timestampMillis reads a 'scan.*.timestamp-millis' option. Kafka takes a
// negative timestamp as "latest" (-1) or "earliest" (-2), so a negative
// value would silently mean something else than a time; one past year
// 9999 is no time in milliseconds either (microseconds, say).
func timestampMillis(o connector.Options, key string) (int64, error) {
	ms, err := o.Int(key, 0)
	if err != nil {
		return 0, err
	}
	if ms < 0 || ms > maxMillis {
		return 0, fmt.Errorf("option '%s': %d is not a time: expected milliseconds since 1970-01-01 00:00:00 UTC, from 0 to %d (9999-12-31 23:59:59.999)", key, ms, int64(maxMillis))
	}
	return ms, nil
}

// checkSpecific refuses specific offsets for a partition the topic does
// not have: a typo that would otherwise be ignored.
func (s *Source) checkSpecific(key string, offsets map[int32]int64) error {
	if offsets == nil || len(s.cfg.topics) != 1 {
		return nil
	}
	n := int32(len(s.parts))
	ps := make([]int32, 0, len(offsets))
	for p := range offsets {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	for _, p := range ps {
		if p >= n {
			return fmt.Errorf("option '%s': topic '%s' has no partition %d (it has %d)", key, s.cfg.topics[0], p, n)
		}
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
	// reset is where reading goes on when the offset a partition resumes
	// at is no longer in its log: "earliest", "latest" or "none" (fail);
	// resetWhy names the option that says so.
	reset, resetWhy string
	logf            func(format string, args ...any)
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
	return s.openAt(ctx, p, -1, 0)
}

// Origins. A row's origin offset is its record's Kafka offset (for a
// changelog format, connector.ChangelogOffset of it) while the partition
// is in epoch 0. When the log a job resumes has been replaced under it
// (the topic deleted and recreated, or truncated) and reading goes on at
// a lower offset, the partition enters the next epoch: its records'
// origins become epoch<<shift plus their offset, above every origin of
// the earlier epochs, so that the job's stateful operators, which drop a
// row whose origin is not above the last they folded in, take the new
// log's rows instead of dropping them as replays. A checkpoint's position
// carries the epoch, so that a later restart resumes in it.
const (
	// epochShift leaves Kafka offsets below 2^56 for plain formats;
	// changelogEpochShift leaves record offsets below 2^44 for changelog
	// formats, whose origins use 16 more bits (connector.ChangelogOffset).
	epochShift          = 56
	changelogEpochShift = 44
)

// epochShift returns the shift of the source's epochs (see above).
func (s *Source) epochShift() uint {
	if s.cfg.changelog {
		return changelogEpochShift
	}
	return epochShift
}

// maxEpoch is the highest epoch the source's origins can number.
func (s *Source) maxEpoch() int64 {
	if s.cfg.changelog {
		return 1<<(47-changelogEpochShift) - 1
	}
	return 1<<(63-epochShift) - 1
}

// resumeRecord returns the epoch and the Kafka offset of the first record
// a position (the origin offset of the last row a checkpoint covered)
// does not wholly cover.
func (s *Source) resumeRecord(pos int64) (epoch, offset int64) {
	rec := pos + 1
	if s.cfg.changelog {
		rec = connector.ChangelogResume(pos)
	}
	shift := s.epochShift()
	return rec >> shift, rec & (1<<shift - 1)
}

// OpenAfter implements connector.Resumer: the partition is read from the
// record after offset, where a job's checkpoint left it.
func (s *Source) OpenAfter(ctx context.Context, p int, offset int64) (connector.Reader, error) {
	epoch, from := s.resumeRecord(offset)
	r, err := s.openAt(ctx, p, from, epoch)
	if err != nil {
		return nil, err
	}
	if s.cfg.changelog {
		// offset is a row's (connector.ChangelogOffset): its record is
		// read again if some of its rows were not covered, and those that
		// were are skipped.
		r.(*Reader).skipTo = offset
	}
	return r, nil
}

// OriginEpoch returns the epoch of the partition's log that an origin
// offset belongs to (see Origins): origins of two epochs are not
// comparable as positions, so that a reader shared by several jobs
// (connector/share) takes on a resumed job only in the epoch it
// resumes in.
func (s *Source) OriginEpoch(offset int64) int64 {
	epoch, _ := s.resumeRecord(offset)
	return epoch
}

// ResumeOffset returns the Kafka offset from which partition reading
// goes on after a position, the origin offset of the last row a
// checkpoint covered: the next record's, or for a changelog format
// (whose rows number the rows of each record) the first record not wholly
// covered. Cluster mode commits it as the group's offset.
func (s *Source) ResumeOffset(pos int64) int64 {
	_, off := s.resumeRecord(pos)
	return off
}

// openAt opens partition p at offset from in epoch, or at the table's
// start position when from is negative.
func (s *Source) openAt(ctx context.Context, p int, from, epoch int64) (connector.Reader, error) {
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
		epoch:  epoch,
		base:   epoch << s.epochShift(),
		limit:  1 << s.epochShift(),
	}
	var err error
	if r.valDec, err = c.valFormat.NewDecoder(c.valSchema, c.valOpts); err != nil {
		return nil, err
	}
	if pr, ok := r.valDec.(format.Pruner); ok && s.table.Read != nil && !c.upsert {
		// The value's columns that no one reads are not decoded (a
		// changelog decoder has no Pruner).
		read := make([]bool, len(c.valIdx))
		for i, j := range c.valIdx {
			read[i] = s.table.Read[j]
		}
		pr.Prune(read)
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
	// An offset that leaves the log while the partition is read is reset
	// as at a resume (see resumeAt); fetchError hears of it.
	reset := kgo.NewOffset().AtStart()
	switch s.reset {
	case "latest":
		reset = kgo.NewOffset().AtEnd()
	case "none":
		reset = kgo.NoResetOffset()
	}
	// Retryable fetch errors are kept so that a topic deleted, or deleted
	// and recreated, under the reader is noticed (see replaced); the
	// client keeps retrying them either way.
	opts := append([]kgo.Opt{kgo.FetchIsolationLevel(iso), kgo.KeepControlRecords(), kgo.ConsumeResetOffset(reset),
		kgo.KeepRetryableFetchErrors()}, c.props.consumer...)
	if r.cl, err = c.newClient(opts...); err != nil {
		return nil, err
	}
	adm := kadm.NewClient(r.cl)
	start := from
	logEnd := int64(-1)
	var moved string // what resumeAt found, for the job's log
	err = c.waitBrokers(ctx, func(octx context.Context) (err error) {
		r.topicID, err = s.topicID(octx, adm, tp.topic)
		if err == nil && from < 0 {
			start, err = s.offset(octx, adm, tp, s.start, false)
		} else if err == nil {
			start, moved, err = s.resumeAt(octx, adm, tp, from)
		}
		if err == nil && s.Bounded() {
			r.end, err = s.offset(octx, adm, tp, s.end, true)
		}
		if err == nil {
			// The backlog is known from the start; the fetches keep
			// it up to date. Not knowing it fails nothing.
			if end, lerr := s.latest(octx, adm, tp); lerr == nil {
				logEnd = end
			}
		}
		return err
	})
	if err == nil && moved != "" {
		// Read on at a lower offset: the partition's next epoch.
		if start < from {
			err = r.nextEpoch()
		}
		if err == nil {
			s.logf("kafka table '%s': %s", s.table.Name, moved)
		}
	}
	if err != nil {
		r.cl.Close()
		return nil, fmt.Errorf("topic %s partition %d: %w", tp.topic, tp.part, err)
	}
	r.next = start
	r.pos.Store(start)
	r.logEnd.Store(logEnd)
	if r.end < 0 || start < r.end {
		r.cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{tp.topic: {tp.part: kgo.NewOffset().At(start)}})
	}
	s.policy.ReaderOpened()
	return r, nil
}

// resumeAt returns the offset at which partition tp goes on after a
// checkpoint that left it at from. When from is no longer in the log
// (beyond its end: the topic was deleted and recreated, or truncated;
// before its start: retention deleted records the job never read), it
// resets as the table's startup mode says, as Flink's consumer does with
// the auto.offset.reset its KafkaSource sets, and returns what happened
// for the job's log; 'none' fails.
func (s *Source) resumeAt(ctx context.Context, adm *kadm.Client, tp partition, from int64) (to int64, reset string, err error) {
	first, err := s.listOffset(ctx, adm, tp, "earliest", adm.ListStartOffsets)
	if err != nil {
		return 0, "", err
	}
	end, err := s.listOffset(ctx, adm, tp, "end", adm.ListEndOffsets)
	if err != nil {
		return 0, "", err
	}
	var what string
	switch {
	case from > end:
		what = fmt.Sprintf("the job's checkpoint is at offset %d of topic %s partition %d, beyond the end of its log (%d): the topic was deleted and recreated, or truncated",
			from, tp.topic, tp.part, end)
	case from < first:
		what = fmt.Sprintf("the job's checkpoint is at offset %d of topic %s partition %d, before the start of its log (%d): records were deleted (retention) before the job read them",
			from, tp.topic, tp.part, first)
	default:
		return from, "", nil
	}
	to = first
	switch s.reset {
	case "none":
		return 0, "", fmt.Errorf("%s; 'properties.auto.offset.reset' is 'none': set it to 'earliest' or 'latest' to read on, or start the job with fresh state", what)
	case "latest":
		if to, err = s.latest(ctx, adm, tp); err != nil {
			return 0, "", err
		}
	}
	return to, fmt.Sprintf("%s; reading on from the %s offset, %d, as %s says (Flink's consumer resets the same way); what the job computed from the old log stays in its state",
		what, s.reset, to, s.resetWhy), nil
}

// topicID returns the ID of topic, all zeros when the cluster does not
// give IDs, and an error when the topic does not exist.
func (s *Source) topicID(ctx context.Context, adm *kadm.Client, topic string) (kadm.TopicID, error) {
	tds, err := adm.ListTopics(ctx, topic)
	if err != nil {
		return kadm.TopicID{}, fmt.Errorf("cannot read metadata of topic '%s': %w", topic, err)
	}
	td, ok := tds[topic]
	if !ok || td.Err != nil {
		return kadm.TopicID{}, fmt.Errorf("cannot read metadata of topic '%s': it does not exist", topic)
	}
	return td.ID, nil
}

// listOffset lists one offset of partition tp with f.
func (s *Source) listOffset(ctx context.Context, adm *kadm.Client, tp partition, what string,
	f func(context.Context, ...string) (kadm.ListedOffsets, error)) (int64, error) {
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

// latest returns the latest offset of tp: the last stable offset for a
// read-committed source, else the high watermark.
func (s *Source) latest(ctx context.Context, adm *kadm.Client, tp partition) (int64, error) {
	if s.cfg.props.readCommitted {
		return s.listOffset(ctx, adm, tp, "latest", adm.ListCommittedOffsets)
	}
	return s.listOffset(ctx, adm, tp, "latest", adm.ListEndOffsets)
}

// offset resolves a position to an offset of partition tp. An end position
// of the partitions not listed in specific offsets is the latest offset.
func (s *Source) offset(ctx context.Context, adm *kadm.Client, tp partition, pos position, isEnd bool) (int64, error) {
	c := s.cfg
	switch pos.mode {
	case modeEarliest:
		return s.listOffset(ctx, adm, tp, "earliest", adm.ListStartOffsets)
	case modeLatest:
		return s.latest(ctx, adm, tp)
	case modeTimestamp:
		return s.listOffset(ctx, adm, tp, "timestamp", func(ctx context.Context, topics ...string) (kadm.ListedOffsets, error) {
			return adm.ListOffsetsAfterMilli(ctx, pos.millis, topics...)
		})
	case modeSpecific:
		if o, ok := pos.specific[tp.part]; ok {
			return o, nil
		}
		if isEnd {
			return s.latest(ctx, adm, tp)
		}
		if c.groupID == "" {
			return s.listOffset(ctx, adm, tp, "earliest", adm.ListStartOffsets)
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
		return s.latest(ctx, adm, tp)
	}
	switch c.props.autoReset {
	case "latest":
		return s.latest(ctx, adm, tp)
	case "none":
		return 0, fmt.Errorf("group '%s' has no committed offset and 'properties.auto.offset.reset' is 'none'", c.groupID)
	}
	return s.listOffset(ctx, adm, tp, "earliest", adm.ListStartOffsets)
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

	// epoch numbers the logs the partition has had under the job (see
	// Source.epochShift); base, epoch<<shift, is added to every record's
	// offset to make its origin, which limit bounds the offsets of.
	epoch, base, limit int64
	// topicID is the ID of the topic being read, to notice that it was
	// deleted and recreated; checked is when replaced last asked, gone
	// whether the topic was missing then.
	topicID kadm.TopicID
	checked time.Time
	gone    bool

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

	// logEnd is the end of the partition's log as last known (listed
	// when the reader opened, then as every fetch response with records
	// gives it: the high watermark, or the last stable offset when
	// reading committed records), -1 while unknown; pos is the next
	// offset to read. Backlog reads them from other goroutines.
	logEnd, pos atomic.Int64

	// wakeMu guards poll, the cancel of the poll under way (nil
	// between polls), and woken, a Wake between polls.
	wakeMu sync.Mutex
	poll   context.CancelFunc
	woken  bool
}

// Wake implements connector.Waker: the poll under way returns with
// what it has; between polls, the next Read returns at once.
func (r *Reader) Wake() {
	r.wakeMu.Lock()
	if r.poll != nil {
		r.poll()
	} else {
		r.woken = true
	}
	r.wakeMu.Unlock()
}

// Skipped implements connector.Stats for this partition.
func (r *Reader) Skipped() int64 { return r.skipped }

// Backlog implements connector.Backlog: the records of the partition not
// read yet (up to its end offset, for a bounded source), from what the
// fetches brought: it costs no request.
func (r *Reader) Backlog() (int64, bool) {
	end := r.logEnd.Load()
	if end < 0 {
		return 0, false
	}
	if r.end >= 0 {
		end = min(end, r.end)
	}
	return max(end-r.pos.Load(), 0), true
}

// noteEnd keeps the log's end that the fetches of fs report.
func (r *Reader) noteEnd(fs kgo.Fetches) {
	fs.EachPartition(func(p kgo.FetchTopicPartition) {
		if p.Err != nil || p.Topic != r.tp.topic || p.Partition != r.tp.part {
			return
		}
		end := p.HighWatermark
		if r.src.cfg.props.readCommitted && p.LastStableOffset >= 0 {
			end = p.LastStableOffset
		}
		if end >= 0 {
			r.logEnd.Store(end)
		}
	})
}

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
	r.wakeMu.Lock()
	if r.woken {
		// Woken between reads: the task has something to do first.
		r.woken = false
		r.wakeMu.Unlock()
		return nil
	}
	pctx, cancel := context.WithTimeout(ctx, pollWait)
	r.poll = cancel
	r.wakeMu.Unlock()
	fs := r.cl.PollRecords(pctx, max)
	r.wakeMu.Lock()
	r.poll = nil
	r.wakeMu.Unlock()
	cancel()
	defer func() { r.pos.Store(r.next) }()
	for _, fe := range fs.Errors() {
		if err := r.fetchError(ctx, fe.Err); err != nil {
			return err
		}
	}
	r.noteEnd(fs)
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
	case errors.As(err, &loss):
		return r.lost(loss)
	case errors.Is(err, kerr.OffsetOutOfRange):
		// Only with 'properties.auto.offset.reset' = 'none': the client
		// resets otherwise.
		return fmt.Errorf("cannot fetch topic %s partition %d at offset %d: it is no longer in the log (the topic was deleted and recreated, or truncated, or retention deleted the records) and 'properties.auto.offset.reset' is 'none': set it to 'earliest' or 'latest' to read on: %w",
			r.tp.topic, r.tp.part, r.next, err)
	case errors.Is(err, kerr.UnknownTopicID), errors.Is(err, kerr.UnknownTopicOrPartition):
		return r.replaced(ctx)
	case kerr.IsRetriable(err):
		return nil
	}
	return fmt.Errorf("cannot fetch topic %s partition %d: %w", r.tp.topic, r.tp.part, err)
}

// replaced handles a broker that no longer knows the topic being read, or
// its ID: the topic was deleted, and perhaps recreated. The client would
// retry forever and read nothing, so the reader asks (at most once a
// second) what became of the topic. While it is missing the job's log
// says so once and the reader waits; once it exists with another ID, its
// new log is read from where the table's startup mode says, as at a
// resume (see Source.resumeAt): the old offset means nothing in it.
func (r *Reader) replaced(ctx context.Context) error {
	if time.Since(r.checked) < time.Second {
		return nil
	}
	r.checked = time.Now()
	s, tp := r.src, r.tp
	octx, cancel := context.WithTimeout(ctx, metadataTimeout)
	defer cancel()
	adm := kadm.NewClient(r.cl)
	id, err := s.topicID(octx, adm, tp.topic)
	if err != nil {
		if !r.gone {
			r.gone = true
			s.logf("kafka table '%s': topic %s no longer exists (%v); waiting for it to come back", s.table.Name, tp.topic, err)
		}
		return nil
	}
	r.gone = false
	if id == r.topicID {
		return nil // a broker that had not heard of it yet
	}
	what := fmt.Sprintf("topic %s was deleted and recreated while partition %d was read at offset %d", tp.topic, tp.part, r.next)
	to, err := s.listOffset(octx, adm, tp, "earliest", adm.ListStartOffsets)
	switch {
	case err != nil:
		return fmt.Errorf("%s: %w", what, err)
	case s.reset == "none":
		return fmt.Errorf("%s, and 'properties.auto.offset.reset' is 'none': set it to 'earliest' or 'latest' to read on", what)
	case s.reset == "latest":
		if to, err = s.latest(octx, adm, tp); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	if to < r.next {
		if err := r.nextEpoch(); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	r.cl.PurgeTopicsFromConsuming(tp.topic)
	r.topicID, r.next = id, to
	if s.Bounded() {
		if r.end, err = s.offset(octx, adm, tp, s.end, true); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	if r.end < 0 || to < r.end {
		r.cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{tp.topic: {tp.part: kgo.NewOffset().At(to)}})
	}
	s.logf("kafka table '%s': %s; reading its new log from the %s offset, %d, as %s says", s.table.Name, what, s.reset, to, s.resetWhy)
	return nil
}

// lost handles the client's report that the partition's offset left its
// log while it was read, and that it reset as the table's startup mode
// says (see Source.resumeAt): a reset to a lower offset starts the next
// epoch, and the job's log hears of it either way.
func (r *Reader) lost(l *kgo.ErrDataLoss) error {
	s := r.src
	what := fmt.Sprintf("records from offset %d on were lost before the job read them (retention deleted them, or the broker lost them)", l.ConsumedTo)
	if l.ResetTo < l.ConsumedTo {
		if err := r.nextEpoch(); err != nil {
			return fmt.Errorf("topic %s partition %d: %w", r.tp.topic, r.tp.part, err)
		}
		what = fmt.Sprintf("offset %d is beyond the end of the log now: the topic was deleted and recreated, or truncated", l.ConsumedTo)
	}
	r.next = l.ResetTo
	s.logf("kafka table '%s': topic %s partition %d: %s; reading on from offset %d, as %s says (Flink's consumer resets the same way)",
		s.table.Name, r.tp.topic, r.tp.part, what, l.ResetTo, s.resetWhy)
	return nil
}

// nextEpoch starts the partition's next epoch: its log was replaced and
// reading goes on at a lower offset.
func (r *Reader) nextEpoch() error {
	s := r.src
	if r.epoch >= s.maxEpoch() {
		return fmt.Errorf("the partition's log has been replaced %d times under the job's state, the most it can tell apart: start the job with fresh state", r.epoch)
	}
	r.epoch++
	r.base = r.epoch << s.epochShift()
	return nil
}

// where names a record for error messages.
func (r *Reader) where(rec *kgo.Record) string {
	return "topic " + rec.Topic + " partition " + strconv.Itoa(int(rec.Partition)) + " offset " + strconv.FormatInt(rec.Offset, 10)
}

// addChangelog appends the rows of rec, a changelog format's record, to b,
// or applies the error policy.
func (r *Reader) addChangelog(b *types.Batch, rec *kgo.Record) error {
	c := r.src.cfg
	first, err := r.changelog.Decode(b, rec.Value, r.part, r.base+rec.Offset)
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
	if rec.Offset >= r.limit {
		return fmt.Errorf("%s: the offset is beyond %d, the highest a row's origin can carry", r.where(rec), r.limit-1)
	}
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
	vals := b.AddRow(kind, types.Origin{Part: r.part, Offset: r.base + rec.Offset}, r.width)
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
	if n := len(b.Rows); n > 0 && b.Rows[n-1].Origin == (types.Origin{Part: r.part, Offset: r.base + rec.Offset}) {
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
	return s.policy.ReaderClosed()
}
