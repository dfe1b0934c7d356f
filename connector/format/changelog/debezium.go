package changelog

import (
	"fmt"

	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/connector/format/json"
	"github.com/sluicesql/sluice/types"
)

// DebeziumFactory builds 'debezium-json' decoders and encoders.
type DebeziumFactory struct{}

// Debezium returns the debezium-json format factory.
func Debezium() DebeziumFactory { return DebeziumFactory{} }

// Name implements format.Factory.
func (DebeziumFactory) Name() string { return "debezium-json" }

// Changelog implements format.ChangelogFactory.
func (DebeziumFactory) Changelog() {}

func (f DebeziumFactory) parse(opts map[string]string) (json.Options, bool, error) {
	o, err := parseOptions(f.Name(), opts, "schema-include")
	if err != nil {
		return o, false, err
	}
	include := false
	switch v, ok := opts["schema-include"]; {
	case !ok || v == "false":
	case v == "true":
		include = true
	default:
		return o, false, fmt.Errorf("debezium-json format: option 'debezium-json.schema-include': expected true or false, got %q", v)
	}
	return o, include, nil
}

// NewDecoder implements format.Factory.
func (f DebeziumFactory) NewDecoder(schema types.Schema, opts map[string]string) (format.Decoder, error) {
	o, include, err := f.parse(opts)
	if err != nil {
		return nil, err
	}
	return &DebeziumDecoder{env: newEnvelope(f.Name(), schema, o), schemaInclude: include}, nil
}

// NewEncoder implements format.Factory.
func (f DebeziumFactory) NewEncoder(schema types.Schema, opts map[string]string) (format.Encoder, error) {
	o, include, err := f.parse(opts)
	if err != nil {
		return nil, err
	}
	if include {
		return nil, fmt.Errorf("debezium-json format: option 'debezium-json.schema-include' applies to reading only: records are written without a schema")
	}
	return &DebeziumEncoder{row: o.NewEncoder(schema)}, nil
}

// DebeziumDecoder reads debezium-json records.
type DebeziumDecoder struct {
	env           envelope
	schemaInclude bool
}

// Decode implements format.Decoder: the record must be one insert.
func (d *DebeziumDecoder) Decode(data []byte, dst []types.Value) error {
	return decodeOne(d.env.name, d, data, dst)
}

// DecodeChangelog implements format.ChangelogDecoder.
func (d *DebeziumDecoder) DecodeChangelog(data []byte, add func(types.RowKind) []types.Value) error {
	if isEmpty(data) {
		return nil // a tombstone: no rows, as in Flink
	}
	var before, after, op, schema, payload []byte
	err := json.Members(data, func(name, v []byte) error {
		switch string(name) {
		case "before":
			before = v
		case "after":
			after = v
		case "op":
			op = v
		case "schema":
			schema = v
		case "payload":
			payload = v
		}
		return nil
	})
	if err != nil {
		return err
	}
	if d.schemaInclude {
		if payload == nil || json.IsNull(payload) {
			return fmt.Errorf("field \"payload\": missing, expected the change event (option 'debezium-json.schema-include' is true)")
		}
		before, after, op = nil, nil, nil
		err := json.Members(payload, func(name, v []byte) error {
			switch string(name) {
			case "before":
				before = v
			case "after":
				after = v
			case "op":
				op = v
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("field \"payload\": %w", err)
		}
	} else if op == nil && payload != nil && schema != nil {
		return fmt.Errorf("field \"op\": missing; the record has \"schema\" and \"payload\" fields: set 'debezium-json.schema-include' = 'true' to read it")
	}
	kind, err := d.env.str("op", op)
	if err != nil {
		return err
	}
	switch kind {
	case "c", "r":
		return d.env.decodeRow("after", -1, after, add(types.Insert))
	case "u":
		if before == nil || json.IsNull(before) {
			return fmt.Errorf("field \"before\": null in an update (\"op\":\"u\"), expected the old row (a Postgres source table needs REPLICA IDENTITY FULL)")
		}
		if err := d.env.decodeRow("before", -1, before, add(types.UpdateBefore)); err != nil {
			return err
		}
		return d.env.decodeRow("after", -1, after, add(types.UpdateAfter))
	case "d":
		if before == nil || json.IsNull(before) {
			return fmt.Errorf("field \"before\": null in a delete (\"op\":\"d\"), expected the deleted row (a Postgres source table needs REPLICA IDENTITY FULL)")
		}
		return d.env.decodeRow("before", -1, before, add(types.Delete))
	}
	return fmt.Errorf("field \"op\": unknown value %q, expected \"c\", \"r\", \"u\" or \"d\"", kind)
}

// DebeziumEncoder writes debezium-json records.
type DebeziumEncoder struct {
	row *json.Encoder
}

// Encode implements format.Encoder: +I and +U rows become {"before":null,
// "after":row,"op":"c"}, -U and -D rows {"before":row,"after":null,"op":"d"}.
func (e *DebeziumEncoder) Encode(dst []byte, r types.Row) ([]byte, error) {
	if err := checkKind("debezium-json", r.Kind); err != nil {
		return dst, err
	}
	var err error
	if r.Kind.IsAccumulate() {
		dst = append(dst, `{"before":null,"after":`...)
		if dst, err = e.row.Encode(dst, r); err != nil {
			return dst, err
		}
		return append(dst, `,"op":"c"}`...), nil
	}
	dst = append(dst, `{"before":`...)
	if dst, err = e.row.Encode(dst, r); err != nil {
		return dst, err
	}
	return append(dst, `,"after":null,"op":"d"}`...), nil
}
