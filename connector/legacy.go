package connector

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Legacy is what TranslateLegacy made of one of Flink's legacy table
// options.
type Legacy struct {
	// Key is the legacy option as written.
	Key string
	// Now is the option it stands for, "" when it has no effect (a
	// descriptor's version, a format schema that the table's columns
	// give).
	Now string
}

// legacyRenames are the legacy options that stand for one option of
// today each, as Flink's TableFactory descriptors named them
// (ConnectorDescriptorValidator, FileSystemValidator, KafkaValidator,
// FormatDescriptorValidator).
var legacyRenames = map[string]string{
	"connector.type":                     "connector",
	"connector.path":                     "path",
	"connector.topic":                    "topic",
	"connector.startup-mode":             "scan.startup.mode",
	"connector.specific-offsets":         "scan.startup.specific-offsets",
	"connector.startup-timestamp-millis": "scan.startup.timestamp-millis",
	"connector.sink-partitioner":         "sink.partitioner",
	"format.type":                        "format",
}

// legacyDropped are the legacy options that today's options have no use
// for: versions of the descriptors, the update mode (the connector and
// format decide what a table takes), and the schema of a format, which
// is derived from the table's columns as 'format.derive-schema' asked.
var legacyDropped = []string{
	"connector.property-version", "connector.version", "format.property-version",
	"format.derive-schema", "update-mode", "format.schema", "format.json-schema",
}

var (
	legacyIndexedProperty = regexp.MustCompile(`^connector\.properties\.(\d+)\.(key|value)$`)
	legacyIndexedOffset   = regexp.MustCompile(`^connector\.specific-offsets\.(\d+)\.(partition|offset)$`)
	legacyFormatField     = regexp.MustCompile(`^format\.fields\.\d+\.(name|data-type|type)$`)
)

// IsLegacy reports whether key is one of Flink's legacy table options
// (those of the TableFactory descriptors, before Flink 1.11's 'connector'
// option).
func IsLegacy(key string) bool {
	switch {
	case legacyRenames[key] != "", slices.Contains(legacyDropped, key),
		strings.HasPrefix(key, "connector.") && key != "connector", strings.HasPrefix(key, "format.") && key != "format":
		return true
	}
	return false
}

// TranslateLegacy rewrites Flink's legacy table options into today's, as
// a table declared with 'connector.type' means: 'connector.type' →
// 'connector', 'connector.path' → 'path', 'connector.topic' → 'topic',
// 'connector.properties.*' → 'properties.*' (the indexed
// 'connector.properties.N.key'/'.value' pairs too), 'connector.startup-mode'
// and the other Kafka startup options → 'scan.startup.*',
// 'connector.sink-partitioner' → 'sink.partitioner', 'format.type' →
// 'format' and every other 'format.x' → '<format>.x' (csv's
// 'format.field-delimiter' → 'csv.field-delimiter'). It returns the options
// of today and what became of each legacy one; tables without legacy
// options come back as they are. A legacy option given beside the one it
// stands for is an error: they might disagree.
func TranslateLegacy(opts map[string]string) (map[string]string, []Legacy, error) {
	var keys []string
	for k := range opts {
		if IsLegacy(k) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return opts, nil, nil
	}
	slices.Sort(keys)
	out := make(map[string]string, len(opts))
	for k, v := range opts {
		if !IsLegacy(k) {
			out[k] = v
		}
	}
	set := func(legacy, now, v string) error {
		if _, dup := out[now]; dup {
			return fmt.Errorf("option '%s' is the legacy form of '%s', which is given too: keep one", legacy, now)
		}
		out[now] = v
		return nil
	}
	format := opts["format.type"]
	if format == "" {
		format = opts["format"]
	}
	var notes []Legacy
	props := map[string][2]string{}   // N → key, value of connector.properties.N.*
	offsets := map[string][2]string{} // N → partition, offset of connector.specific-offsets.N.*
	for _, k := range keys {
		v := opts[k]
		switch now := legacyRenames[k]; {
		case now != "":
			if k == "connector.sink-partitioner" && v == "custom" {
				// Today's option takes the class name itself.
				v = opts["connector.sink-partitioner-class"]
			}
			if err := set(k, now, v); err != nil {
				return nil, nil, err
			}
			notes = append(notes, Legacy{Key: k, Now: now})
		case slices.Contains(legacyDropped, k) || legacyFormatField.MatchString(k) || k == "connector.sink-partitioner-class":
			if k == "connector.sink-partitioner-class" {
				notes = append(notes, Legacy{Key: k, Now: "sink.partitioner"})
				continue
			}
			notes = append(notes, Legacy{Key: k})
		case legacyIndexedProperty.MatchString(k):
			m := legacyIndexedProperty.FindStringSubmatch(k)
			p := props[m[1]]
			if m[2] == "key" {
				p[0] = v
			} else {
				p[1] = v
			}
			props[m[1]] = p
			notes = append(notes, Legacy{Key: k, Now: "properties.*"})
		case legacyIndexedOffset.MatchString(k):
			m := legacyIndexedOffset.FindStringSubmatch(k)
			o := offsets[m[1]]
			if m[2] == "partition" {
				o[0] = v
			} else {
				o[1] = v
			}
			offsets[m[1]] = o
			notes = append(notes, Legacy{Key: k, Now: "scan.startup.specific-offsets"})
		case strings.HasPrefix(k, "connector.properties."):
			now := strings.TrimPrefix(k, "connector.")
			if err := set(k, now, v); err != nil {
				return nil, nil, err
			}
			notes = append(notes, Legacy{Key: k, Now: now})
		case k == "format.line-delimiter":
			// Lines end with '\n' (a '\r' before it is dropped), the
			// delimiters Flink's legacy csv took.
			if v != "\n" && v != "\r\n" && v != `\n` && v != `\r\n` {
				return nil, nil, fmt.Errorf("option 'format.line-delimiter' = %q is not supported: lines end with a line feed", v)
			}
			notes = append(notes, Legacy{Key: k})
		case k == "format.comment-prefix":
			if v != "#" {
				return nil, nil, fmt.Errorf("option 'format.comment-prefix' = %q is not supported: '#' is (the csv format's 'csv.allow-comments')", v)
			}
			if err := set(k, format+".allow-comments", "true"); err != nil {
				return nil, nil, err
			}
			notes = append(notes, Legacy{Key: k, Now: format + ".allow-comments"})
		case strings.HasPrefix(k, "format."):
			if format == "" {
				return nil, nil, fmt.Errorf("option '%s' needs 'format.type' (or 'format')", k)
			}
			now := format + strings.TrimPrefix(k, "format")
			if err := set(k, now, v); err != nil {
				return nil, nil, err
			}
			notes = append(notes, Legacy{Key: k, Now: now})
		default:
			// A 'connector.x' Flink's descriptors never had: left to the
			// connector, which names it as unknown.
			out[k] = v
		}
	}
	for _, n := range sortedIndexes(props) {
		p := props[n]
		if p[0] == "" {
			return nil, nil, fmt.Errorf("option 'connector.properties.%s.value' has no 'connector.properties.%s.key'", n, n)
		}
		if err := set("connector.properties."+n+".key", "properties."+p[0], p[1]); err != nil {
			return nil, nil, err
		}
	}
	if len(offsets) > 0 {
		var parts []string
		for _, n := range sortedIndexes(offsets) {
			o := offsets[n]
			parts = append(parts, "partition:"+o[0]+",offset:"+o[1])
		}
		if err := set("connector.specific-offsets.0.partition", "scan.startup.specific-offsets", strings.Join(parts, ";")); err != nil {
			return nil, nil, err
		}
	}
	return out, notes, nil
}

// sortedIndexes returns the keys of m, decimal numbers, in numeric order.
func sortedIndexes(m map[string][2]string) []string {
	out := slices.Collect(maps.Keys(m))
	slices.SortFunc(out, func(a, b string) int {
		x, _ := strconv.Atoi(a)
		y, _ := strconv.Atoi(b)
		return x - y
	})
	return out
}
