package connector

import (
	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/types"
)

// MessageRows says how the messages of a source table whose records are
// messages of type M (an MQTT packet, an AMQP delivery, ...), each with
// one payload in the table's format, become rows: the payload decoded
// into the physical columns, the METADATA columns computed from the
// message, and the table's error policy applied to a payload the format
// cannot decode.
type MessageRows[M any] struct {
	Table   Table
	Format  format.Factory
	Options Options // the format's options
	Policy  *ErrorPolicy
	// Meta computes the value of each METADATA column of Table, in order.
	Meta []func(M) types.Value
	// Where locates a message for error messages, e.g. "topic 'a'
	// message-id 7"; it is called only for a message that fails.
	Where func(M) string
}

// NewDecoder returns a decoder of the messages of partition part. Its
// format decoder decodes only the columns the job reads (format.Pruner).
// A source can call it once when the table is created to check the
// format's options.
func (mr *MessageRows[M]) NewDecoder(part int) (*MessageDecoder[M], error) {
	dec, err := mr.Format.NewDecoder(mr.Table.Schema, mr.Options)
	if err != nil {
		return nil, err
	}
	phys := mr.Table.Schema.Len()
	if pr, ok := dec.(format.Pruner); ok && mr.Table.Read != nil {
		pr.Prune(mr.Table.Read[:phys])
	}
	return &MessageDecoder[M]{rows: mr, dec: dec, part: int32(part), phys: phys, width: phys + len(mr.Meta)}, nil
}

// MessageDecoder turns messages into rows of one partition. A reader uses
// it from one goroutine at a time.
type MessageDecoder[M any] struct {
	rows    *MessageRows[M]
	dec     format.Decoder
	part    int32
	phys    int // the physical columns, before the METADATA ones
	width   int
	skipped int64
}

// Add appends to b the row of message m, whose payload is payload, with
// origin offset off. When the format cannot decode the payload, it
// applies the error policy instead: it returns the policy's error, or nil
// having added no row (the message is skipped and counted).
func (d *MessageDecoder[M]) Add(b *types.Batch, off int64, payload []byte, m M) error {
	vals := b.AddRow(types.Insert, types.Origin{Part: d.part, Offset: off}, d.width)
	if err := d.dec.Decode(payload, vals[:d.phys]); err != nil {
		clear(vals)
		b.Rows = b.Rows[:len(b.Rows)-1]
		if herr := d.rows.Policy.Handle(d.rows.Where(m), payload, err); herr != nil {
			return herr
		}
		d.skipped++
		return nil
	}
	for i, f := range d.rows.Meta {
		vals[d.phys+i] = f(m)
	}
	return nil
}

// Skipped returns the number of messages this decoder skipped as
// malformed; a reader's Skipped (Stats) can return it.
func (d *MessageDecoder[M]) Skipped() int64 { return d.skipped }
