package rocketmq

import (
	"fmt"
	"sort"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/types"
)

// message is a message read, whichever way it came.
type message struct {
	topic    string
	id       string
	tag      *string
	keys     []string
	props    map[string]string
	born     *time.Time
	bornHost string
	queue    int32 // -1: not known (a simple consumer's message)
	offset   int64
	attempt  int32 // 0: not known (pulled by offset)
	body     []byte
}

// metadataTypes are the METADATA keys of the connector with their types.
var metadataTypes = map[string]string{
	"topic":            "STRING NOT NULL",
	"message-id":       "STRING NOT NULL",
	"tag":              "STRING NULL",
	"keys":             "ARRAY<STRING> NOT NULL",
	"properties":       "MAP<STRING, STRING> NOT NULL",
	"born-timestamp":   "TIMESTAMP_LTZ(3) NULL",
	"born-host":        "STRING NULL",
	"queue-id":         "INT NULL",
	"queue-offset":     "BIGINT NOT NULL",
	"delivery-attempt": "INT NULL",
}

// metaFunc computes a METADATA column's value from a message.
type metaFunc = func(m *message) types.Value

// metadataFuncs returns one function per METADATA column of t, checking
// that each column's declared type can hold the value.
func metadataFuncs(t connector.Table) ([]metaFunc, error) {
	out := make([]metaFunc, len(t.Metadata))
	for i, m := range t.Metadata {
		want, known := metadataTypes[m.Key]
		if !known {
			return nil, fmt.Errorf("column '%s': unknown METADATA key '%s'", m.Name, m.Key)
		}
		f := metadataFunc(m.Key, m.Type)
		if f == nil {
			return nil, fmt.Errorf("column '%s': METADATA '%s' is %s and cannot be read as %s", m.Name, m.Key, want, m.Type)
		}
		out[i] = f
	}
	return out, nil
}

func isInt(k types.Kind) bool {
	return k == types.KindInt || k == types.KindBigInt
}

func metadataFunc(key string, t types.Type) metaFunc {
	k := t.Kind
	str := func(get func(m *message) (string, bool)) metaFunc {
		if !k.IsString() {
			return nil
		}
		return func(m *message) types.Value {
			s, ok := get(m)
			if !ok {
				return types.NullValue
			}
			return types.StringValue(s).WithKind(k)
		}
	}
	switch key {
	case "topic":
		return str(func(m *message) (string, bool) { return m.topic, true })
	case "message-id":
		return str(func(m *message) (string, bool) { return m.id, true })
	case "tag":
		return str(func(m *message) (string, bool) {
			if m.tag == nil {
				return "", false
			}
			return *m.tag, true
		})
	case "born-host":
		return str(func(m *message) (string, bool) { return m.bornHost, m.bornHost != "" })
	case "queue-id":
		if !isInt(k) {
			return nil
		}
		return func(m *message) types.Value {
			if m.queue < 0 {
				return types.NullValue
			}
			return types.IntValue(k, int64(m.queue))
		}
	case "queue-offset":
		if k != types.KindBigInt {
			return nil
		}
		return func(m *message) types.Value { return types.BigIntValue(m.offset) }
	case "delivery-attempt":
		if !isInt(k) {
			return nil
		}
		return func(m *message) types.Value {
			if m.attempt <= 0 {
				return types.NullValue
			}
			return types.IntValue(k, int64(m.attempt))
		}
	case "born-timestamp":
		if !k.IsTimestamp() {
			return nil
		}
		return func(m *message) types.Value {
			if m.born == nil {
				return types.NullValue
			}
			return types.TimestampLTZValue(m.born.UnixMilli() * 1000).WithKind(k)
		}
	case "keys":
		if k != types.KindArray || t.Elem == nil || !t.Elem.Kind.IsString() {
			return nil
		}
		ek := t.Elem.Kind
		return func(m *message) types.Value {
			vs := make([]types.Value, len(m.keys))
			for i, s := range m.keys {
				vs[i] = types.StringValue(s).WithKind(ek)
			}
			return types.ArrayValue(vs)
		}
	case "properties":
		if k != types.KindMap || t.Elem == nil || t.Value == nil || !t.Elem.Kind.IsString() || !t.Value.Kind.IsString() {
			return nil
		}
		kk, vk := t.Elem.Kind, t.Value.Kind
		return func(m *message) types.Value {
			keys := make([]string, 0, len(m.props))
			for key := range m.props {
				keys = append(keys, key)
			}
			sort.Strings(keys) // a map's order is the protocol's: none
			mv := &types.MapValue{Keys: make([]types.Value, len(keys)), Values: make([]types.Value, len(keys))}
			for i, key := range keys {
				mv.Keys[i] = types.StringValue(key).WithKind(kk)
				mv.Values[i] = types.StringValue(m.props[key]).WithKind(vk)
			}
			return types.NewMapValue(mv)
		}
	}
	return nil
}
