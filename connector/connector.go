// Package connector defines how Sluice reads and writes tables: factories
// registered by connector name in a Registry value that the engine owns,
// sources split into partitions that readers consume, and sinks.
//
// Concrete connectors live in subpackages (filesystem, datagen, print,
// blackhole, ...); formats live under connector/format.
package connector

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/types"
)

// Table is what a connector gets to build a source or a sink: the table's
// name, its physical columns and its WITH options.
type Table struct {
	// Name is the table's name as written in the DDL, for messages.
	Name string
	// Schema holds the physical columns, in order: the ones a source
	// produces and a sink receives (computed columns are not included).
	Schema types.Schema
	// Metadata are the METADATA columns a source must produce after the
	// physical ones, in this order (and a sink receives after them, for
	// the non-virtual ones). A connector that provides no metadata rejects
	// a table that declares some.
	Metadata []MetadataColumn
	// PrimaryKey names the primary key columns, if any.
	PrimaryKey []string
	// PartitionKeys name the PARTITIONED BY columns, if any (physical
	// columns). Connectors that do not lay data out by partition
	// (PartitionedFactory) refuse a table that has some.
	PartitionKeys []string
	// Options are the WITH options. Keys are as written (Flink option keys
	// are case-sensitive).
	Options Options
	// Read says which columns of the source's row (the physical columns,
	// then the metadata ones) the job reads; nil: all. A source may leave
	// the others NULL, and its format skip them without decoding (a value
	// there that would not decode is then no error, as with Flink's
	// projection push-down). It is not part of the table's identity.
	Read []bool
}

// MetadataColumn is a METADATA column: the column's name, the connector's
// metadata key (e.g. "offset", "partition", "timestamp", "headers") and its
// declared type. A virtual column is read-only: sinks never receive it.
type MetadataColumn struct {
	Name    string
	Key     string
	Type    types.Type
	Virtual bool
}

// MetadataFactory is a SourceFactory whose sources can produce METADATA
// columns; the registry refuses metadata keys for which ProvidesMetadata is
// false, and any metadata for factories without this interface.
type MetadataFactory interface {
	ProvidesMetadata(key string) bool
}

// RejectMetadata returns an error when t declares METADATA columns; for
// connectors that provide none.
func RejectMetadata(connectorName string, t Table) error {
	if len(t.Metadata) > 0 {
		return fmt.Errorf("connector '%s' provides no metadata, but column '%s' reads METADATA '%s'",
			connectorName, t.Metadata[0].Name, t.Metadata[0].Key)
	}
	return nil
}

// PartitionedFactory is a Factory whose tables may be PARTITIONED BY
// columns (the filesystem connector lays them out as k=v directories).
type PartitionedFactory interface {
	SupportsPartitions() bool
}

// Env is what the engine lends connectors.
type Env struct {
	// Formats resolves 'format' option values.
	Formats *format.Registry
	// Stdout is where print sinks write.
	Stdout io.Writer
	// Now returns processing time in microseconds since the epoch.
	Now func() int64
	// Location is the session time zone ('table.local-time-zone'), in
	// which the print connector shows TIMESTAMP_LTZ values, as Flink
	// represents them as strings; nil is UTC.
	Location *time.Location
	// KafkaTxn, when the job's state lives in Kafka, is the *kgo.Client
	// whose open transaction each checkpoint commits: exactly-once Kafka
	// sinks write into it, so that output, state and positions commit
	// together. Nil otherwise.
	KafkaTxn any
	// DurableState says that the job's state outlives its process and is
	// not in Kafka (a 'state.dir'): a restarted job resumes from it. A
	// sink that cannot commit its output atomically with that state's
	// checkpoints must not promise exactly-once.
	DurableState bool
	// KafkaTxnGate, with KafkaTxn, is held for reading while a record is
	// produced into the transaction, and for writing by the state backend
	// while one transaction ends and the next begins: a record produced
	// then would belong to no transaction, and fail.
	KafkaTxnGate *sync.RWMutex
	// Logf, if set, writes a line to the job's log: what a connector must
	// not keep to itself, such as a source resuming elsewhere than its
	// checkpoint says or a server it cannot reach. Safe for concurrent
	// use. Use Env.Log, which does nothing without it.
	Logf func(format string, args ...any)
	// Job is the name of the job the table is read or written by (its
	// state's prefix): the same in every run of the job, and never that
	// of another job running at the same time. "" outside a job.
	Job string
	// StateDir is the session's 'state.dir', where the job keeps its
	// state ("" when it keeps none on disk): a connector that must keep
	// something of its own across restarts (a sink's store-and-forward
	// buffer) keeps it under it, in a folder named for the job.
	StateDir string
	// Reconnects, if set, counts the connections to a system that a
	// connector made again after losing one (the job's metric).
	Reconnects *atomic.Int64
	// Dropped, if set, counts the messages a sink dropped by its table's
	// policy (a full store-and-forward buffer with 'drop-oldest').
	Dropped *atomic.Int64
}

// CountReconnect adds a reconnection to the job's metric, if it has one.
func (e Env) CountReconnect() {
	if e.Reconnects != nil {
		e.Reconnects.Add(1)
	}
}

// CountDropped adds n dropped messages to the job's metric, if it has one.
func (e Env) CountDropped(n int64) {
	if e.Dropped != nil {
		e.Dropped.Add(n)
	}
}

// Log writes a line to the job's log, if it has one.
func (e Env) Log(format string, args ...any) {
	if e.Logf != nil {
		e.Logf(format, args...)
	}
}

// Factory builds sources and/or sinks for one connector name.
type Factory interface {
	// Name is the value of the 'connector' option.
	Name() string
}

// SourceFactory is a Factory that can read.
type SourceFactory interface {
	Factory
	CreateSource(t Table, env Env) (Source, error)
}

// SingleWriterFactory is implemented by a SinkFactory some of whose tables
// are written through one target that takes a single writer (a filesystem
// table whose path is a file, appended to at each commit): it names that
// target, so that a plan with two writers of it is refused before it runs.
type SingleWriterFactory interface {
	SingleWriterTarget(t Table) (target string, ok bool)
}

// SinkFactory is a Factory that can write.
type SinkFactory interface {
	Factory
	CreateSink(t Table, env Env) (Sink, error)
}

// MaxPartitions is the most partitions a source whose partitions are an
// option (datagen, nexmark) may have. Each partition is a task of the job
// with an output to every task of the next stage, as many as
// exec.MaxParallelism allows for those.
const MaxPartitions = 1024

// Source is a table being read. It is split into partitions, each read by
// its own Reader; watermarks are tracked per partition.
type Source interface {
	// Partitions returns the number of partitions.
	Partitions() int
	// Bounded reports whether every partition ends.
	Bounded() bool
	// Open opens partition p for reading.
	Open(ctx context.Context, p int) (Reader, error)
}

// Resumer is a Source that can open a partition just after a position: the
// origin offset of the last row a job's checkpoint covered. Sources that
// are not Resumers are replayed from their start and the rows up to the
// position skipped.
type Resumer interface {
	OpenAfter(ctx context.Context, p int, offset int64) (Reader, error)
}

// NamedPartitions is a Source whose partitions may come and go between
// runs of a job (the files of a directory). A job keeps each partition's
// position and origin number under its name, not its index, so that a
// partition added or removed does not move the others'; and a partition
// whose content was replaced (not only extended) is read again from its
// start, as a new one.
type NamedPartitions interface {
	// PartitionName is partition p's stable name (a file's path).
	PartitionName(p int) string
	// PartitionVersion describes partition p's content as it is now, for
	// SameVersion to compare in a later run.
	PartitionVersion(p int) ([]byte, error)
	// SameVersion reports whether partition p still holds the content
	// that version (from an earlier run's PartitionVersion) described,
	// possibly extended.
	SameVersion(p int, version []byte) bool
}

// OpenLimit is a Source that bounds how many of its partitions are read
// at once (a directory of many files): the others wait for one to end
// before they open.
type OpenLimit interface {
	MaxOpen() int
}

// Generator is a Source that makes its rows up rather than decoding
// them (datagen, procgen, nexmark): its rows hold every column whatever
// Table.Read says, and none is ever malformed, so that two sources of
// one table that differ only in Table.Read read the same rows.
type Generator interface {
	Generates() bool
}

// Reader reads one partition.
type Reader interface {
	// Read appends up to max rows of the table's physical schema to b, each
	// with kind types.Insert (or its changelog kind) and an Origin naming
	// the partition and the record's offset (line number, message offset).
	// It returns io.EOF once the partition is exhausted and b holds no new
	// rows. An unbounded reader that has no data returns nil with no rows
	// after a short wait (at most about 100 ms), so that the caller can
	// advance processing time and detect idle partitions. A malformed
	// record is handled by the table's error policy (see ErrorPolicy).
	Read(ctx context.Context, b *types.Batch, max int) error
	// Close releases the partition.
	Close() error
}

// ViewReader is a Reader that can hand out rows it holds, without a
// copy: those of a shared source's reader, which every job reading it
// gets. ReadView returns up to max rows as Read would append them (or
// none, or the error); they stay valid until the reader's next call, and
// no one may change them.
type ViewReader interface {
	Reader
	ReadView(ctx context.Context, max int) ([]types.Row, error)
}

// Pusher is a ViewReader that can hand its rows to its consumer itself,
// from the goroutine that reads them, while the consumer waits in
// ReadView: a shared source's reader then runs the chains of the
// thousand jobs that read it one after the other, and wakes no job's
// goroutine for a batch. SetPush sets fn (nil: none), which a ReadView
// that waits for rows may have called, with up to max rows at a time,
// in place of returning them; each call ends before that ReadView
// returns, and none overlaps another or a call of the consumer's own.
// The rows are valid during the call only, and no one may change them.
// The first error fn returns ends the wait: ReadView returns it, and
// fn is called no more.
type Pusher interface {
	ViewReader
	SetPush(max int, fn func(rows []types.Row) error)
}

// Waker is a Reader whose Read, while it waits for records, can be cut
// short from another goroutine: Wake makes the Read under way (or, if
// none is, the next) return soon, with the rows it has (possibly none).
// The engine wakes a source's task when a checkpoint needs it (a barrier
// to send, or a completed checkpoint for a sink that runs in the task to
// commit), so that an idle source does not hold them up for a read's
// wait.
type Waker interface {
	Reader
	Wake()
}

// Acknowledger is a Reader of a system that redelivers what a consumer has
// not acknowledged (MQTT at QoS 1 or 2 with a persistent session): rather
// than seek to a position, a restarted job gets again what the last one
// did not acknowledge. In a job that takes checkpoints, the reader
// acknowledges a message only once the checkpoint that holds its effect
// has completed, so that a crash loses nothing (at-least-once: what was
// read after that checkpoint comes again). The source task calls every
// method from its own goroutine, the one that calls Read.
type Acknowledger interface {
	// DeferAcks is called once, before the first Read, when the job takes
	// checkpoints. Without it, the reader acknowledges what it read once
	// the job has processed it (at its next Read).
	DeferAcks()
	// Barrier says that the messages read so far belong to checkpoint id.
	Barrier(id int64)
	// Acknowledge says that checkpoint id completed: the messages of it
	// and of earlier checkpoints are acknowledged. An id of -1 is the
	// job's final commit, which holds everything read.
	Acknowledge(id int64) error
}

// Acknowledged is a Source whose readers are Acknowledgers: each job
// acknowledges what it read itself, so the engine never shares such a
// source's readers between jobs (see connector/share).
type Acknowledged interface {
	Acknowledges() bool
}

// Sink is a table being written.
type Sink interface {
	// Write writes the rows of b (with their changelog kinds). It may
	// buffer; it must not retain b.
	Write(ctx context.Context, b *types.Batch) error
	// Flush makes everything written so far visible/durable.
	Flush(ctx context.Context) error
	// Close flushes and releases the sink.
	Close() error
}

// Committer is a Sink that makes its writes visible in two steps, in step
// with the job's checkpoints: Prepare, called at a checkpoint barrier and at
// the end of input, makes everything written so far durable but not yet
// visible; Commit, called once the checkpoint is complete (state and source
// positions durable), makes it visible. Close discards what was written
// but not committed. A sink that is not a Committer is at-least-once.
type Committer interface {
	Prepare(ctx context.Context) error
	Commit(ctx context.Context) error
}

// Holder is a Committer that writes into a transaction someone else commits
// (the job's state backend) and so holds the records it receives between a
// Prepare and the Commit that follows. Release writes them into the open
// transaction at once: the runtime calls it when the job has ended, before
// its final commit.
type Holder interface {
	Release(ctx context.Context) error
}

// EndPreparer is a Committer whose preparation at the end of its input
// differs from a checkpoint's: a Holder's Prepare writes the records it
// held since the last barrier into the open transaction, as the
// checkpoint that held them has completed by the time the next barrier
// comes; at the end of input it may still be committing, so PrepareEnd
// keeps them for Release (which the runtime calls once it has).
type EndPreparer interface {
	PrepareEnd(ctx context.Context) error
}

// StatefulSink is a Committer that keeps state with the job's
// checkpoints: what it prepared and has not yet made visible (a file
// sink's in-progress files), so that a restarted job finishes or undoes it.
type StatefulSink interface {
	Committer
	// Restore is called once, before any write.
	Restore(ctx context.Context, r SinkRestore) error
	// Snapshot returns the sink's state, after a Prepare.
	Snapshot() ([]byte, error)
}

// WatermarkSink is a Sink that hears the watermark of its input (a file
// sink whose partitions are committed by their time).
type WatermarkSink interface {
	SinkWatermark(wm int64)
}

// SinkRestore is what a StatefulSink restores from.
type SinkRestore struct {
	// Owner names the sink's state, the same in every run of the job
	// ("" when the job keeps no state): what the sink leaves unfinished
	// under it is the business of later runs of the same owner only.
	Owner string
	// Snapshot is what Snapshot returned at the job's last completed
	// checkpoint (nil when there is none).
	Snapshot []byte
	// Checkpointed says whether the job takes checkpoints that keep the
	// sink's state (else nothing resumes what it leaves unfinished).
	Checkpointed bool
}

// SelfCommitting is a Committer that, in a job without checkpoints, wants
// Prepare and Commit called about every CommitEvery (a file sink makes what
// it wrote visible so).
type SelfCommitting interface {
	CommitEvery() time.Duration
}

// Stats are optional counters a Reader may expose.
type Stats interface {
	// Skipped returns the number of malformed records skipped so far.
	Skipped() int64
}

// Backlog is implemented by a Reader that knows how many records of its
// partition it has not read yet: for a Kafka partition, the end of the
// log as the last fetch response gave it (its high watermark) minus the
// next offset to read. Backlog is called from other goroutines than
// Read's, at any time: it must be safe for concurrent use and cheap, and
// must not ask the source's system (the figure comes with what Read
// fetches anyway). ok is false while the reader does not know.
type Backlog interface {
	Backlog() (records int64, ok bool)
}

// ChangelogSink is a SinkFactory whose sinks can take updates and deletes
// (-U/+U/-D rows) for the given table (e.g. because its format is a
// changelog format, looked up in env.Formats); the planner rejects an
// updating query into any other sink.
type ChangelogSink interface {
	AcceptsChangelog(t Table, env Env) bool
}
