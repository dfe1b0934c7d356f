package changelog

import (
	"fmt"

	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/connector/format/json"
	"github.com/sluicesql/sluice/types"
)

// CanalFactory builds 'canal-json' decoders and encoders.
type CanalFactory struct{}

// Canal returns the canal-json format factory.
func Canal() CanalFactory { return CanalFactory{} }

// Name implements format.Factory.
func (CanalFactory) Name() string { return "canal-json" }

// Changelog implements format.ChangelogFactory.
func (CanalFactory) Changelog() {}

// NewDecoder implements format.Factory.
func (f CanalFactory) NewDecoder(schema types.Schema, opts map[string]string) (format.Decoder, error) {
	o, err := parseOptions(f.Name(), opts, filterOptions...)
	if err != nil {
		return nil, err
	}
	flt, err := parseFilter(f.Name(), opts)
	if err != nil {
		return nil, err
	}
	return &CanalDecoder{env: newEnvelope(f.Name(), schema, o), filter: flt}, nil
}

// NewEncoder implements format.Factory.
func (f CanalFactory) NewEncoder(schema types.Schema, opts map[string]string) (format.Encoder, error) {
	o, err := parseOptions(f.Name(), opts, filterOptions...)
	if err != nil {
		return nil, err
	}
	return &CanalEncoder{row: o.NewEncoder(schema)}, nil
}

// CanalDecoder reads canal-json records.
type CanalDecoder struct {
	env    envelope
	filter filter
	olds   [][]byte // scratch: the elements of "old"
}

// Decode implements format.Decoder: the record must be one insert.
func (d *CanalDecoder) Decode(data []byte, dst []types.Value) error {
	return decodeOne(d.env.name, d, data, dst)
}

// DecodeChangelog implements format.ChangelogDecoder.
func (d *CanalDecoder) DecodeChangelog(data []byte, add func(types.RowKind) []types.Value) error {
	if isEmpty(data) {
		return nil // a tombstone: no rows, as in Flink
	}
	var rows, old, typ, db, tbl, ddl []byte
	err := json.Members(data, func(name, v []byte) error {
		switch string(name) {
		case "data":
			rows = v
		case "old":
			old = v
		case "type":
			typ = v
		case "database":
			db = v
		case "table":
			tbl = v
		case "isDdl":
			ddl = v
		}
		return nil
	})
	if err != nil {
		return err
	}
	if ok, err := d.filter.match(&d.env, db, tbl); err != nil || !ok {
		return err
	}
	if string(ddl) == "true" {
		return nil // a schema change: no rows
	}
	kind, err := d.env.str("type", typ)
	if err != nil {
		return err
	}
	var k types.RowKind
	switch kind {
	case "INSERT":
		k = types.Insert
	case "DELETE":
		k = types.Delete
	case "UPDATE":
		k = types.UpdateAfter
	case "CREATE":
		return nil // a table was created: no rows
	default:
		return fmt.Errorf("field \"type\": unknown value %q, expected \"INSERT\", \"UPDATE\" or \"DELETE\"", kind)
	}
	// The record's syntax is checked: an array's elements are values.
	if len(rows) == 0 || rows[0] != '[' {
		return fmt.Errorf("field \"data\": %s, expected an array of rows for type %s", describe(rows), kind)
	}
	if k == types.UpdateAfter {
		if len(old) == 0 || old[0] != '[' {
			return fmt.Errorf("field \"old\": %s, expected an array of the changed fields for type UPDATE", describe(old))
		}
		d.olds = d.olds[:0]
		_ = json.Elements(old, func(_ int, v []byte) error {
			d.olds = append(d.olds, v)
			return nil
		})
	}
	n := 0
	err = json.Elements(rows, func(i int, v []byte) error {
		n++
		if k != types.UpdateAfter {
			return d.env.decodeRow("data", i, v, add(k))
		}
		if i >= len(d.olds) {
			return fmt.Errorf("field \"old\": %d elements, expected one per element of \"data\"", len(d.olds))
		}
		before, after := add(types.UpdateBefore), add(types.UpdateAfter)
		if err := d.env.decodeRow("data", i, v, after); err != nil {
			return err
		}
		return d.env.decodeBefore("old", i, d.olds[i], before, after)
	})
	if err != nil {
		return err
	}
	if k == types.UpdateAfter && n != len(d.olds) {
		return fmt.Errorf("field \"old\": %d elements, expected one per element of \"data\" (%d)", len(d.olds), n)
	}
	return nil
}

// CanalEncoder writes canal-json records.
type CanalEncoder struct {
	row *json.Encoder
}

// Encode implements format.Encoder: +I and +U rows become {"data":[row],
// "type":"INSERT"}, -U and -D rows {"data":[row],"type":"DELETE"}.
func (e *CanalEncoder) Encode(dst []byte, r types.Row) ([]byte, error) {
	if err := checkKind("canal-json", r.Kind); err != nil {
		return dst, err
	}
	dst = append(dst, `{"data":[`...)
	var err error
	if dst, err = e.row.Encode(dst, r); err != nil {
		return dst, err
	}
	if r.Kind.IsAccumulate() {
		return append(dst, `],"type":"INSERT"}`...), nil
	}
	return append(dst, `],"type":"DELETE"}`...), nil
}
