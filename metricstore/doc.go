// Package metricstore holds the current value of every metric of every
// metric group, by key, as the last completed checkpoint committed it:
// read in batches (Store.Read: many keys and metrics in one call, each
// value with a status and the time of the latest event folded into it)
// and followed as a stream of committed changes (Store.Subscribe).
//
// The metric-group operator is its only writer. It declares a group
// (Store.Define), and once a checkpoint has completed it hands over the
// changes that checkpoint made durable (Store.Commit). When it restores
// its state (a restart, a partition taken over from another instance
// through the Kafka changelog) it commits the restored values again,
// after Store.Reset or in one Store.Replace: the store itself is not a
// source of truth, and keeps nothing across a restart.
//
// Invariants:
//   - Readers and subscribers see only committed state, and a Commit
//     whole or not at all: a commit's changes are installed under the
//     group's write lock, and a Read looks its keys up under the read
//     lock.
//   - Values are held as immutable records (one per key: the group's
//     layout number, then the key and the values, their NULLs and the
//     event times, in the rowcodec encoding). A commit replaces a key's
//     record, never changes it, so that the change log and a snapshot
//     being sent share records with the table without copying them.
//   - Keys are looked up by their types.AppendKey encoding: an INT key
//     and a BIGINT one of the same number are the same key, as in the
//     engine's GROUP BY.
//   - A group's changes are numbered in commit order (a Token: the
//     group's incarnation and the number). A subscriber resumes after a
//     token from the bounded change log; when the log no longer holds what
//     follows it (or the token is of another incarnation: a restart, a
//     dropped group) it gets a snapshot of the current values first,
//     marked Reset. It never gets a gap without being told.
//   - Subscribers pull from the shared change log, each at its own
//     position: a commit never waits for a subscriber, and a subscriber
//     that falls behind the log's start goes on from a snapshot.
//   - Records live in append-only byte chunks indexed by a hash of the
//     key (table.go), with no pointer per key for the collector.
//   - Beyond Options.MemoryBudget, the records of the keys not written
//     for longest (the oldest chunk's) move to a local state directory
//     (state/lsm) and are read from there; a change to such a key, or a
//     read of it, brings it back into memory at the next commit. The
//     directory is a cache, emptied when the store opens.
//   - Writers (commits, definitions, evictions) are serialized by the
//     group's commit mutex; a commit stages its records under the read
//     lock and installs them under the write lock.
package metricstore
