package kshuffle

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicesql/sluice/types"
)

// Compression is the codec of shuffle payloads. The zero value picks the
// default, zstd.
type Compression uint8

// Compression codecs.
const (
	DefaultCompression Compression = iota
	NoCompression
	Zstd
	LZ4
	Snappy
	numCompressions
)

var compressionNames = [...]string{DefaultCompression: "default", NoCompression: "none", Zstd: "zstd", LZ4: "lz4", Snappy: "snappy"}

// String returns the codec's option value: default, none, zstd, lz4 or
// snappy.
func (c Compression) String() string {
	if c < numCompressions {
		return compressionNames[c]
	}
	return fmt.Sprintf("Compression(%d)", uint8(c))
}

// ParseCompression parses a codec name (none, zstd, lz4, snappy or
// default), case-insensitively.
func ParseCompression(s string) (Compression, error) {
	for c, name := range compressionNames {
		if strings.EqualFold(s, name) {
			return Compression(c), nil
		}
	}
	return 0, fmt.Errorf("unknown shuffle compression '%s' (want one of none, zstd, lz4, snappy)", s)
}

func (c Compression) kgoCodec() kgo.CompressionCodec {
	switch c {
	case Zstd:
		return kgo.ZstdCompression()
	case LZ4:
		return kgo.Lz4Compression()
	case Snappy:
		return kgo.SnappyCompression()
	}
	return kgo.NoCompression()
}

// Defaults of Options.
const (
	DefaultBatchBytes        = 128 << 10
	DefaultLinger            = 10 * time.Millisecond
	DefaultWatermarkInterval = 100 * time.Millisecond
)

// Options configure a Writer.
type Options struct {
	// Topic is the shuffle topic; Open creates it with Partitions
	// partitions when it does not exist and fails when it has another
	// number of partitions.
	Topic string
	// Partitions is the number of partitions of the topic: the parallelism
	// of the next stage.
	Partitions int
	// Replication is the replication factor of a topic Open creates; 0
	// means the broker's default.
	Replication int16
	// Schema are the types of the rows' columns.
	Schema []types.Type
	// Keys are the columns whose hash picks a row's partition; none sends
	// every row to the same partition.
	Keys []int
	// WriterID identifies this writer among the Writers upstream tasks
	// writing to the topic: 0 <= WriterID < Writers.
	WriterID int
	Writers  int

	// BatchBytes is the payload size, before compression, at which a
	// partition's buffered rows are sent (default DefaultBatchBytes). 1
	// sends every row as its own record. The compressed payload must fit
	// the topic's max.message.bytes (about 1 MB by default).
	BatchBytes int
	// Linger is the longest rows and watermarks wait in the writer before
	// they are sent (default DefaultLinger). Negative sends at the end of
	// every Process and Watermark call.
	Linger time.Duration
	// WatermarkInterval is the least time between two watermarks the
	// writer sends (default DefaultWatermarkInterval): each is a record
	// to every partition. Negative sends each watermark with the next
	// flush of rows (at once when Linger is negative).
	WatermarkInterval time.Duration
	// Compression compresses payloads (default zstd).
	Compression Compression
	// CompressBatches compresses Kafka record batches with the client
	// (kgo.ProducerBatchCompression) instead of compressing each payload.
	// It needs a client the writer builds itself (Client nil).
	CompressBatches bool

	// Transactional says that Client's transaction is committed by the
	// job's checkpoints (the state backend's, in cluster mode): the records
	// a writer produces after a checkpoint barrier are held back until
	// that checkpoint completed (CheckpointComplete), so that they go into
	// the next transaction, and Finish sends the end of input only after
	// MaxWatermark: a task stopped without draining (a rebalance) leaves
	// the readers waiting for the task that takes its partition over.
	Transactional bool

	// Client is the Kafka client to produce with; it must partition
	// records manually (kgo.RecordPartitioner(kgo.ManualPartitioner()))
	// and should not compress batches (kgo.ProducerBatchCompression(
	// kgo.NoCompression()); the client's default is snappy, which spends
	// time on payloads compressed already). The writer does not close it.
	// When nil, the writer builds its own from Brokers and ClientOpts and
	// closes it in Close.
	Client *kgo.Client
	// Gate, if set, is held for reading while a record is produced with
	// Client (see connector.Env.KafkaTxnGate).
	Gate       *sync.RWMutex
	Brokers    []string
	ClientOpts []kgo.Opt
}

// EnsureDefaults fills in the defaults of unset fields and returns o.
func (o Options) EnsureDefaults() Options {
	if o.BatchBytes <= 0 {
		o.BatchBytes = DefaultBatchBytes
	}
	if o.Linger == 0 {
		o.Linger = DefaultLinger
	}
	if o.WatermarkInterval == 0 {
		o.WatermarkInterval = DefaultWatermarkInterval
	}
	if o.Compression == DefaultCompression {
		o.Compression = Zstd
	}
	return o
}

// Validate checks the options (after EnsureDefaults).
func (o Options) Validate() error {
	var errs []error
	if o.Topic == "" {
		errs = append(errs, errors.New("no topic"))
	}
	if o.Partitions <= 0 {
		errs = append(errs, fmt.Errorf("partitions must be positive, not %d", o.Partitions))
	}
	if o.Writers <= 0 || o.WriterID < 0 || o.WriterID >= o.Writers {
		errs = append(errs, fmt.Errorf("writer id %d out of range [0,%d)", o.WriterID, o.Writers))
	}
	for _, k := range o.Keys {
		if k < 0 || k >= len(o.Schema) {
			errs = append(errs, fmt.Errorf("key column %d out of range [0,%d)", k, len(o.Schema)))
		}
	}
	if o.Compression >= numCompressions {
		errs = append(errs, fmt.Errorf("unknown compression %d", uint8(o.Compression)))
	}
	if o.CompressBatches && o.Client != nil {
		errs = append(errs, errors.New("CompressBatches needs a client the writer builds (Client must be nil)"))
	}
	if o.Client == nil && len(o.Brokers) == 0 {
		errs = append(errs, errors.New("neither a client nor brokers"))
	}
	if len(errs) > 0 {
		return fmt.Errorf("kshuffle: invalid writer options: %w", errors.Join(errs...))
	}
	return nil
}

// SourceOptions configure a Source.
type SourceOptions struct {
	// Topic, Partitions and Replication are as in Options.
	Topic       string
	Partitions  int
	Replication int16
	// Schema are the types of the rows' columns.
	Schema []types.Type
	// Writers is the number of upstream tasks writing to the topic; a
	// partition ends once each of them has written its end of input.
	Writers int
	// Bounded reports whether the upstream stage ends.
	Bounded bool
	// Start, if set, returns where to start reading partition p (see
	// Reader.Checkpoint); nil or a zero Checkpoint reads from the start.
	Start func(p int) Checkpoint
	// Brokers and ClientOpts build the client of each partition's reader.
	// The readers read committed records only, unless ClientOpts say
	// otherwise.
	Brokers    []string
	ClientOpts []kgo.Opt
	// MaxPayload bounds the decompressed size of one record (default
	// 64 MiB); a larger record is an error.
	MaxPayload int
}

// DefaultMaxPayload is the default of SourceOptions.MaxPayload.
const DefaultMaxPayload = 64 << 20

// EnsureDefaults fills in the defaults of unset fields and returns o.
func (o SourceOptions) EnsureDefaults() SourceOptions {
	if o.MaxPayload <= 0 {
		o.MaxPayload = DefaultMaxPayload
	}
	return o
}

// Validate checks the options.
func (o SourceOptions) Validate() error {
	var errs []error
	if o.Topic == "" {
		errs = append(errs, errors.New("no topic"))
	}
	if o.Partitions <= 0 {
		errs = append(errs, fmt.Errorf("partitions must be positive, not %d", o.Partitions))
	}
	if o.Writers <= 0 {
		errs = append(errs, fmt.Errorf("writers must be positive, not %d", o.Writers))
	}
	if len(o.Brokers) == 0 {
		errs = append(errs, errors.New("no brokers"))
	}
	if len(errs) > 0 {
		return fmt.Errorf("kshuffle: invalid source options: %w", errors.Join(errs...))
	}
	return nil
}
