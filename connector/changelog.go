package connector

import (
	"fmt"

	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/types"
)

// ChangelogSource is a SourceFactory that tells the planner whether its
// source for a table produces a changelog (rows of every kind) rather than
// inserts only: e.g. a filesystem or kafka table whose format is
// debezium-json. The planner makes such a table's scan updating, so that
// the operators downstream take retractions and the sink check is right.
type ChangelogSource interface {
	ProducesChangelog(t Table, env Env) bool
}

// UpsertSource is a ChangelogSource whose changelog is an upsert stream
// keyed by the table's primary key (upsert-kafka): a key's new row comes as
// +I or +U without the -U of the row it replaces, and a deletion may carry
// only the key. The planner puts a ChangelogNormalize after its scan.
type UpsertSource interface {
	ProducesUpserts(t Table) bool
}

// FormatIsChangelog reports whether the format named by t's option key
// (e.g. "format" or "value.format") is a changelog format.
func FormatIsChangelog(t Table, env Env, key string) bool {
	if env.Formats == nil {
		return false
	}
	f, err := env.Formats.Lookup(t.Options[key])
	return err == nil && format.IsChangelog(f)
}

// Rows decoded from one changelog record share the record's offset; the
// stateful operators, which drop a row whose origin offset is not above
// the last they saw, must tell them apart. So the origin offset of such a
// row is the record's offset shifted left by changelogRowBits plus the
// row's number, and the last row of a record takes the highest number: a
// position (the origin of the last row read) then maps back to the first
// record not wholly read with ChangelogResume.
const changelogRowBits = 16

// MaxChangelogRows bounds the rows one changelog record may give.
const MaxChangelogRows = 1<<changelogRowBits - 1

// ChangelogOffset returns the origin offset of row i of the n rows decoded
// from the record at offset rec (0 <= i < n <= MaxChangelogRows).
func ChangelogOffset(rec int64, i, n int) int64 {
	if i == n-1 {
		i = MaxChangelogRows
	}
	return rec<<changelogRowBits | int64(i)
}

// ChangelogRecord returns the offset of the record a changelog row's origin
// offset belongs to.
func ChangelogRecord(off int64) int64 { return off >> changelogRowBits }

// ChangelogResume returns the offset of the first record that a position
// (the origin offset of the last row a checkpoint covered) does not cover
// whole: the record after it, or its own record when only some of its rows
// were read (a reader then skips the rows up to the position).
func ChangelogResume(pos int64) int64 { return (pos + 1) >> changelogRowBits }

// ChangelogRows decodes changelog records into batches, numbering the rows'
// origins with ChangelogOffset. It is not safe for concurrent use; build
// one per reader.
type ChangelogRows struct {
	dec   format.ChangelogDecoder
	width int
	fill  int

	b    *types.Batch
	part int32
	add  func(types.RowKind) []types.Value
}

// NewChangelogRows returns a ChangelogRows that appends rows of width
// values, of which the decoder fills the first fill.
func NewChangelogRows(dec format.ChangelogDecoder, width, fill int) *ChangelogRows {
	c := &ChangelogRows{dec: dec, width: width, fill: fill}
	c.add = func(k types.RowKind) []types.Value {
		return c.b.AddRow(k, types.Origin{Part: c.part}, c.width)[:c.fill]
	}
	return c
}

// Decode appends the rows of the record at offset rec of partition part
// to b and returns the index in b.Rows of the first. On error b is left as
// it was.
func (c *ChangelogRows) Decode(b *types.Batch, data []byte, part int32, rec int64) (int, error) {
	first := len(b.Rows)
	c.b, c.part = b, part
	err := c.dec.DecodeChangelog(data, c.add)
	c.b = nil
	n := len(b.Rows) - first
	if err == nil && n > MaxChangelogRows {
		err = fmt.Errorf("the record gives %d rows, more than the %d allowed", n, MaxChangelogRows)
	}
	if err != nil {
		for i := first; i < len(b.Rows); i++ {
			clear(b.Rows[i].Vals)
		}
		b.Rows = b.Rows[:first]
		return first, err
	}
	for i := range n {
		b.Rows[first+i].Origin.Offset = ChangelogOffset(rec, i, n)
	}
	return first, nil
}
