package changelog

import (
	"fmt"

	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/connector/format/json"
	"github.com/sluicesql/sluice/types"
)

// MaxwellFactory builds 'maxwell-json' decoders and encoders.
type MaxwellFactory struct{}

// Maxwell returns the maxwell-json format factory.
func Maxwell() MaxwellFactory { return MaxwellFactory{} }

// Name implements format.Factory.
func (MaxwellFactory) Name() string { return "maxwell-json" }

// Changelog implements format.ChangelogFactory.
func (MaxwellFactory) Changelog() {}

// NewDecoder implements format.Factory.
func (f MaxwellFactory) NewDecoder(schema types.Schema, opts map[string]string) (format.Decoder, error) {
	o, err := parseOptions(f.Name(), opts, filterOptions...)
	if err != nil {
		return nil, err
	}
	flt, err := parseFilter(f.Name(), opts)
	if err != nil {
		return nil, err
	}
	return &MaxwellDecoder{env: newEnvelope(f.Name(), schema, o), filter: flt}, nil
}

// NewEncoder implements format.Factory.
func (f MaxwellFactory) NewEncoder(schema types.Schema, opts map[string]string) (format.Encoder, error) {
	o, err := parseOptions(f.Name(), opts, filterOptions...)
	if err != nil {
		return nil, err
	}
	return &MaxwellEncoder{row: o.NewEncoder(schema)}, nil
}

// MaxwellDecoder reads maxwell-json records.
type MaxwellDecoder struct {
	env    envelope
	filter filter
}

// Decode implements format.Decoder: the record must be one insert.
func (d *MaxwellDecoder) Decode(data []byte, dst []types.Value) error {
	return decodeOne(d.env.name, d, data, dst)
}

// DecodeChangelog implements format.ChangelogDecoder.
func (d *MaxwellDecoder) DecodeChangelog(data []byte, add func(types.RowKind) []types.Value) error {
	if isEmpty(data) {
		return nil // a tombstone: no rows, as in Flink
	}
	var row, old, typ, db, tbl []byte
	err := json.Members(data, func(name, v []byte) error {
		switch string(name) {
		case "data":
			row = v
		case "old":
			old = v
		case "type":
			typ = v
		case "database":
			db = v
		case "table":
			tbl = v
		}
		return nil
	})
	if err != nil {
		return err
	}
	if ok, err := d.filter.match(&d.env, db, tbl); err != nil || !ok {
		return err
	}
	kind, err := d.env.str("type", typ)
	if err != nil {
		return err
	}
	switch kind {
	case "insert", "bootstrap-insert":
		return d.env.decodeRow("data", -1, row, add(types.Insert))
	case "delete":
		return d.env.decodeRow("data", -1, row, add(types.Delete))
	case "update":
		before, after := add(types.UpdateBefore), add(types.UpdateAfter)
		if err := d.env.decodeRow("data", -1, row, after); err != nil {
			return err
		}
		return d.env.decodeBefore("old", -1, old, before, after)
	case "bootstrap-start", "bootstrap-complete":
		return nil // markers around a bootstrap: no rows
	}
	return fmt.Errorf("field \"type\": unknown value %q, expected \"insert\", \"update\" or \"delete\"", kind)
}

// MaxwellEncoder writes maxwell-json records.
type MaxwellEncoder struct {
	row *json.Encoder
}

// Encode implements format.Encoder: +I and +U rows become {"data":row,
// "type":"insert"}, -U and -D rows {"data":row,"type":"delete"}.
func (e *MaxwellEncoder) Encode(dst []byte, r types.Row) ([]byte, error) {
	if err := checkKind("maxwell-json", r.Kind); err != nil {
		return dst, err
	}
	dst = append(dst, `{"data":`...)
	var err error
	if dst, err = e.row.Encode(dst, r); err != nil {
		return dst, err
	}
	if r.Kind.IsAccumulate() {
		return append(dst, `,"type":"insert"}`...), nil
	}
	return append(dst, `,"type":"delete"}`...), nil
}
