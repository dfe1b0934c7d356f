package connector

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// TestTranslateLegacy reads the legacy options of Flink's TableFactory
// descriptors (ConnectorDescriptorValidator, FileSystemValidator,
// KafkaValidator, FormatDescriptorValidator, CsvValidator, JsonValidator)
// as today's.
func TestTranslateLegacy(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   map[string]string
		want map[string]string
		err  string
	}{
		{"filesystem csv (Nexmark q13)", map[string]string{
			"connector.type": "filesystem", "connector.path": "file:///data/side_input.txt", "format.type": "csv",
			"format.field-delimiter": "|", "format.quote-character": "'", "format.line-delimiter": `\n`, "format.comment-prefix": "#",
			"format.fields.0.name": "key", "format.fields.0.data-type": "BIGINT", "format.derive-schema": "true",
		}, map[string]string{
			"connector": "filesystem", "path": "file:///data/side_input.txt", "format": "csv",
			"csv.field-delimiter": "|", "csv.quote-character": "'", "csv.allow-comments": "true",
		}, ""},
		{"kafka json, concise properties", map[string]string{
			"connector.type": "kafka", "connector.version": "universal", "connector.topic": "bids",
			"connector.properties.bootstrap.servers": "127.0.0.1:9092", "connector.properties.group.id": "g",
			"connector.startup-mode": "specific-offsets", "connector.specific-offsets": "partition:0,offset:42;partition:1,offset:300",
			"connector.sink-partitioner": "round-robin", "update-mode": "append",
			"format.type": "json", "format.fail-on-missing-field": "true", "format.ignore-parse-errors": "false",
		}, map[string]string{
			"connector": "kafka", "topic": "bids", "properties.bootstrap.servers": "127.0.0.1:9092", "properties.group.id": "g",
			"scan.startup.mode": "specific-offsets", "scan.startup.specific-offsets": "partition:0,offset:42;partition:1,offset:300",
			"sink.partitioner": "round-robin", "format": "json", "json.fail-on-missing-field": "true", "json.ignore-parse-errors": "false",
		}, ""},
		{"kafka, indexed properties and offsets", map[string]string{
			"connector.type": "kafka", "connector.topic": "bids",
			"connector.properties.0.key": "bootstrap.servers", "connector.properties.0.value": "127.0.0.1:9092",
			"connector.properties.1.key": "group.id", "connector.properties.1.value": "g",
			"connector.startup-mode":                  "specific-offsets",
			"connector.specific-offsets.10.partition": "10", "connector.specific-offsets.10.offset": "7",
			"connector.specific-offsets.2.partition": "2", "connector.specific-offsets.2.offset": "5",
			"connector.sink-partitioner": "custom", "connector.sink-partitioner-class": "com.example.P",
			"value.format": "json",
		}, map[string]string{
			"connector": "kafka", "topic": "bids", "properties.bootstrap.servers": "127.0.0.1:9092", "properties.group.id": "g",
			"scan.startup.mode": "specific-offsets", "scan.startup.specific-offsets": "partition:2,offset:5;partition:10,offset:7",
			"sink.partitioner": "com.example.P", "value.format": "json",
		}, ""},
		{"today's options", map[string]string{"connector": "print"}, map[string]string{"connector": "print"}, ""},
		{"both forms", map[string]string{"connector": "kafka", "connector.type": "kafka"}, nil,
			"option 'connector.type' is the legacy form of 'connector', which is given too: keep one"},
		{"a format option without a format", map[string]string{"connector.type": "filesystem", "format.field-delimiter": "|"}, nil,
			"option 'format.field-delimiter' needs 'format.type' (or 'format')"},
		{"another line delimiter", map[string]string{"connector.type": "filesystem", "format.type": "csv", "format.line-delimiter": ";"}, nil,
			"option 'format.line-delimiter' = \";\" is not supported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, notes, err := TranslateLegacy(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, tc.want) {
				t.Errorf("got  %v\nwant %v", got, tc.want)
			}
			// Every legacy option gets a notice, and only those.
			var noted []string
			for _, n := range notes {
				noted = append(noted, n.Key)
			}
			var legacy []string
			for k := range tc.in {
				if IsLegacy(k) {
					legacy = append(legacy, k)
				}
			}
			slices.Sort(noted)
			slices.Sort(legacy)
			if !slices.Equal(noted, legacy) {
				t.Errorf("notices for %v, want %v", noted, legacy)
			}
		})
	}
}
