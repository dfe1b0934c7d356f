package builtin

import (
	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/blackhole"
	"github.com/sluicesql/sluice/connector/datagen"
	"github.com/sluicesql/sluice/connector/filesystem"
	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/connector/format/changelog"
	"github.com/sluicesql/sluice/connector/format/csv"
	"github.com/sluicesql/sluice/connector/format/json"
	"github.com/sluicesql/sluice/connector/format/raw"
	"github.com/sluicesql/sluice/connector/http"
	"github.com/sluicesql/sluice/connector/jdbc"
	"github.com/sluicesql/sluice/connector/kafka"
	"github.com/sluicesql/sluice/connector/mqtt"
	"github.com/sluicesql/sluice/connector/nats"
	"github.com/sluicesql/sluice/connector/nexmark"
	"github.com/sluicesql/sluice/connector/print"
	"github.com/sluicesql/sluice/connector/procgen"
	"github.com/sluicesql/sluice/connector/rabbitmq"
	"github.com/sluicesql/sluice/connector/redis"
)

// Connectors returns the built-in connector factories: blackhole, datagen,
// filesystem, http, jdbc, kafka, mqtt, nats, nexmark, print, procgen,
// rabbitmq, redis, rocketmq (unless built with the tag norocketmq) and
// upsert-kafka.
func Connectors() []connector.Factory {
	return append([]connector.Factory{blackhole.New(), datagen.New(), filesystem.New(), http.New(), jdbc.New(),
		kafka.New(), mqtt.New(), nats.New(), nexmark.New(), print.New(), procgen.New(), rabbitmq.New(), redis.New(),
		kafka.NewUpsert()}, optional()...)
}

// Formats returns the built-in format factories: csv, json, raw and the
// changelog formats debezium-json, canal-json and maxwell-json.
func Formats() []format.Factory {
	return append([]format.Factory{csv.New(), json.New(), raw.New()}, changelog.Formats()...)
}

// Register adds the built-in connectors and formats to c and f.
func Register(c *connector.Registry, f *format.Registry) error {
	for _, x := range Connectors() {
		if err := c.Register(x); err != nil {
			return err
		}
	}
	for _, x := range Formats() {
		if err := f.Register(x); err != nil {
			return err
		}
	}
	return nil
}
