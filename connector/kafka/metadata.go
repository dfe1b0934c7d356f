package kafka

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/types"
)

// metadataTypes are the METADATA keys the connectors provide, with their
// Flink types.
var metadataTypes = map[string]string{
	"topic":          "STRING NOT NULL",
	"partition":      "INT NOT NULL",
	"offset":         "BIGINT NOT NULL",
	"timestamp":      "TIMESTAMP_LTZ(3) NOT NULL",
	"timestamp-type": "STRING NOT NULL",
	"headers":        "MAP<STRING, BYTES> NOT NULL",
	"leader-epoch":   "INT NULL",
}

// metaFunc computes a METADATA column's value from a record.
type metaFunc func(r *kgo.Record) types.Value

// metadataFuncs returns one function per METADATA column of t, checking
// that each column's declared type can hold the value.
func metadataFuncs(t connector.Table) ([]metaFunc, error) {
	out := make([]metaFunc, len(t.Metadata))
	for i, m := range t.Metadata {
		f, ok := metadataFunc(m.Key, m.Type)
		if !ok {
			if _, known := metadataTypes[m.Key]; !known {
				return nil, fmt.Errorf("column '%s': unknown METADATA key '%s'", m.Name, m.Key)
			}
			return nil, fmt.Errorf("column '%s': METADATA '%s' is %s and cannot be read as %s",
				m.Name, m.Key, metadataTypes[m.Key], m.Type)
		}
		out[i] = f
	}
	return out, nil
}

func metadataFunc(key string, t types.Type) (metaFunc, bool) {
	k := t.Kind
	switch key {
	case "topic":
		if !k.IsString() {
			return nil, false
		}
		return func(r *kgo.Record) types.Value { return types.StringValue(r.Topic).WithKind(k) }, true
	case "partition":
		if k != types.KindInt && k != types.KindBigInt {
			return nil, false
		}
		return func(r *kgo.Record) types.Value { return types.IntValue(k, int64(r.Partition)) }, true
	case "offset":
		if k != types.KindBigInt {
			return nil, false
		}
		return func(r *kgo.Record) types.Value { return types.BigIntValue(r.Offset) }, true
	case "leader-epoch":
		if k != types.KindInt && k != types.KindBigInt {
			return nil, false
		}
		return func(r *kgo.Record) types.Value {
			if r.LeaderEpoch < 0 {
				return types.NullValue
			}
			return types.IntValue(k, int64(r.LeaderEpoch))
		}, true
	case "timestamp":
		if !k.IsTimestamp() {
			return nil, false
		}
		return func(r *kgo.Record) types.Value {
			return types.TimestampLTZValue(r.Timestamp.UnixMilli() * 1000).WithKind(k)
		}, true
	case "timestamp-type":
		if !k.IsString() {
			return nil, false
		}
		return func(r *kgo.Record) types.Value {
			s := "NoTimestampType"
			switch r.Attrs.TimestampType() {
			case 0:
				s = "CreateTime"
			case 1:
				s = "LogAppendTime"
			}
			return types.StringValue(s).WithKind(k)
		}, true
	case "headers":
		if k != types.KindMap || t.Elem == nil || t.Value == nil || !t.Elem.Kind.IsString() ||
			!t.Value.Kind.IsBinary() && !t.Value.Kind.IsString() {
			return nil, false
		}
		kk, vk := t.Elem.Kind, t.Value.Kind
		return func(r *kgo.Record) types.Value { return headersValue(r.Headers, kk, vk) }, true
	}
	return nil, false
}

// headersValue returns the headers as a MAP; of repeated keys the last
// wins, as a MAP holds each key once.
func headersValue(hs []kgo.RecordHeader, kk, vk types.Kind) types.Value {
	m := &types.MapValue{Keys: make([]types.Value, 0, len(hs)), Values: make([]types.Value, 0, len(hs))}
next:
	for _, h := range hs {
		v := types.NullValue
		if h.Value != nil {
			v = types.BytesValue(h.Value).WithKind(vk)
		}
		for i, k := range m.Keys {
			if k.Str() == h.Key {
				m.Values[i] = v
				continue next
			}
		}
		m.Keys = append(m.Keys, types.StringValue(h.Key).WithKind(kk))
		m.Values = append(m.Values, v)
	}
	return types.NewMapValue(m)
}
