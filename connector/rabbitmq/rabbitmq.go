package rabbitmq

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Factory builds 'rabbitmq' sources and sinks.
type Factory struct{}

// New returns the 'rabbitmq' connector factory.
func New() Factory { return Factory{} }

// Name implements connector.Factory.
func (Factory) Name() string { return "rabbitmq" }

// ProvidesMetadata implements connector.MetadataFactory.
func (Factory) ProvidesMetadata(key string) bool { _, ok := metadataTypes[key]; return ok }

func sortedKeys(t amqp.Table) []string {
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// headerString renders a header's value (AMQP field tables are typed) as
// a string: text as it is, numbers and booleans as SQL writes them, a
// timestamp in ISO 8601 (UTC), nested tables and arrays as JSON.
func headerString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	case bool:
		return strconv.FormatBool(v)
	case int8, int16, int32, int64, int, uint8, uint16, uint32:
		return fmt.Sprint(v)
	case float32:
		return strconv.FormatFloat(float64(v), 'g', -1, 32)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case time.Time:
		return v.UTC().Format("2006-01-02T15:04:05Z")
	case amqp.Decimal:
		s := strconv.FormatInt(int64(v.Value), 10)
		if v.Scale == 0 {
			return s
		}
		neg := len(s) > 0 && s[0] == '-'
		if neg {
			s = s[1:]
		}
		for len(s) <= int(v.Scale) {
			s = "0" + s
		}
		s = s[:len(s)-int(v.Scale)] + "." + s[len(s)-int(v.Scale):]
		if neg {
			s = "-" + s
		}
		return s
	}
	if b, err := json.Marshal(jsonable(v)); err == nil {
		return string(b)
	}
	return fmt.Sprint(v)
}

// jsonable turns nested tables and arrays into what encoding/json takes.
func jsonable(v any) any {
	switch v := v.(type) {
	case amqp.Table:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = jsonable(x)
		}
		return m
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = jsonable(x)
		}
		return out
	case []byte:
		return string(v)
	case time.Time, amqp.Decimal:
		return headerString(v)
	}
	return v
}
