package kafka

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicesql/sluice/internal/kafkasecurity"
)

// properties are the 'properties.*' options translated for the client.
// Kafka client properties that have no counterpart here are accepted and
// ignored, as Flink passes every one of them through to its client.
type properties struct {
	common   []kgo.Opt
	consumer []kgo.Opt
	producer []kgo.Opt

	readCommitted bool // isolation.level; default read_committed
	// apiTimeout (default.api.timeout.ms, 60 s by default as in Kafka's
	// clients) is how long a table waits for brokers it cannot reach
	// when the job starts.
	apiTimeout  time.Duration
	autoReset   string // auto.offset.reset: earliest (default), latest, none
	acks        string // acks: "all" (default), "1", "0"
	idempotence bool   // enable.idempotence; default true
	// security: security.protocol with the sasl.* and ssl.* properties.
	security kafkasecurity.Security
}

func parseProperties(p map[string]string) (properties, error) {
	out := properties{readCommitted: true, autoReset: "earliest", acks: "all", idempotence: true, apiTimeout: time.Minute}
	ms := func(key string) (time.Duration, error) {
		n, err := strconv.ParseInt(strings.TrimSpace(p[key]), 10, 32) // an int, as in Kafka's clients
		if err != nil || n < 0 {
			return 0, fmt.Errorf("option 'properties.%s': cannot parse %q as milliseconds from 0 to 2147483647", key, p[key])
		}
		return time.Duration(n) * time.Millisecond, nil
	}
	bytes := func(key string) (int32, error) {
		n, err := strconv.ParseInt(strings.TrimSpace(p[key]), 10, 32)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("option 'properties.%s': cannot parse %q as a positive number of bytes", key, p[key])
		}
		return int32(n), nil
	}
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the first error is the same on every run
	var err error
	if out.security, err = kafkasecurity.Parse(p, "properties."); err != nil {
		return out, err
	}
	out.common = append(out.common, out.security.Opts...)
	for _, key := range keys {
		v := strings.TrimSpace(p[key])
		switch key {
		case "client.id":
			out.common = append(out.common, kgo.ClientID(v))
		case "isolation.level":
			switch strings.ToLower(v) {
			case "read_committed":
				out.readCommitted = true
			case "read_uncommitted":
				out.readCommitted = false
			default:
				return out, fmt.Errorf("option 'properties.isolation.level': unsupported value '%s' (expected 'read_committed' or 'read_uncommitted')", v)
			}
		case "auto.offset.reset":
			switch strings.ToLower(v) {
			case "earliest", "latest", "none":
				out.autoReset = strings.ToLower(v)
			default:
				return out, fmt.Errorf("option 'properties.auto.offset.reset': unsupported value '%s' (expected 'earliest', 'latest' or 'none')", v)
			}
		case "fetch.max.wait.ms":
			d, err := ms(key)
			if err != nil {
				return out, err
			}
			out.consumer = append(out.consumer, kgo.FetchMaxWait(d))
		case "fetch.min.bytes", "fetch.max.bytes", "max.partition.fetch.bytes":
			n, err := bytes(key)
			if err != nil {
				return out, err
			}
			switch key {
			case "fetch.min.bytes":
				out.consumer = append(out.consumer, kgo.FetchMinBytes(n))
			case "fetch.max.bytes":
				out.consumer = append(out.consumer, kgo.FetchMaxBytes(n))
			default:
				out.consumer = append(out.consumer, kgo.FetchMaxPartitionBytes(n))
			}
		case "linger.ms":
			d, err := ms(key)
			if err != nil {
				return out, err
			}
			out.producer = append(out.producer, kgo.ProducerLinger(d))
		case "batch.size":
			n, err := bytes(key)
			if err != nil {
				return out, err
			}
			out.producer = append(out.producer, kgo.ProducerBatchMaxBytes(n))
		case "compression.type":
			var c kgo.CompressionCodec
			switch strings.ToLower(v) {
			case "none":
				c = kgo.NoCompression()
			case "gzip":
				c = kgo.GzipCompression()
			case "snappy":
				c = kgo.SnappyCompression()
			case "lz4":
				c = kgo.Lz4Compression()
			case "zstd":
				c = kgo.ZstdCompression()
			default:
				return out, fmt.Errorf("option 'properties.compression.type': unsupported value '%s' (expected none, gzip, snappy, lz4 or zstd)", v)
			}
			out.producer = append(out.producer, kgo.ProducerBatchCompression(c))
		case "acks":
			switch strings.ToLower(v) {
			case "all", "-1":
				out.acks = "all"
			case "0", "1":
				out.acks = v
			default:
				return out, fmt.Errorf("option 'properties.acks': unsupported value '%s' (expected all, 1 or 0)", v)
			}
		case "enable.idempotence":
			switch strings.ToLower(v) {
			case "true":
				out.idempotence = true
			case "false":
				out.idempotence = false
			default:
				return out, fmt.Errorf("option 'properties.enable.idempotence': expected true or false, got %q", v)
			}
		case "transaction.timeout.ms":
			d, err := ms(key)
			if err != nil {
				return out, err
			}
			out.producer = append(out.producer, kgo.TransactionTimeout(d))
		case "request.timeout.ms":
			d, err := ms(key)
			if err != nil {
				return out, err
			}
			out.producer = append(out.producer, kgo.ProduceRequestTimeout(d))
		case "delivery.timeout.ms":
			d, err := ms(key)
			if err != nil {
				return out, err
			}
			out.producer = append(out.producer, kgo.RecordDeliveryTimeout(d))
		case "default.api.timeout.ms":
			d, err := ms(key)
			if err != nil {
				return out, err
			}
			out.apiTimeout = d
		case "socket.connection.setup.timeout.ms":
			d, err := ms(key)
			if err != nil {
				return out, err
			}
			out.common = append(out.common, kgo.DialTimeout(d))
		case "metadata.max.age.ms":
			d, err := ms(key)
			if err != nil {
				return out, err
			}
			out.common = append(out.common, kgo.MetadataMaxAge(d))
		}
	}
	return out, nil
}
