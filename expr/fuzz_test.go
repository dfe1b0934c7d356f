package expr

import (
	"regexp"
	"testing"
	"unicode/utf8"
)

// FuzzLikeMatcher compares the regular-expression-free matcher for
// patterns made of text and '%' with the regular expression Flink's
// translation gives for the same pattern.
func FuzzLikeMatcher(f *testing.F) {
	f.Add("a%b%c", "axxbyyc")
	f.Add("%ab%", "ab")
	f.Add("a%a", "a")
	f.Add("%%", "")
	f.Add("x.y%", "x.yz")
	f.Fuzz(func(t *testing.T, pattern, s string) {
		if !utf8.ValidString(pattern) || !utf8.ValidString(s) {
			return // the regexp reads invalid bytes as U+FFFD; the matcher compares bytes
		}
		m, err := likeMatcher(pattern, 0)
		if err != nil {
			return
		}
		re, err := regexp.Compile("^(?:" + sqlToRegexLike([]rune(pattern), 0) + ")$")
		if err != nil {
			t.Fatalf("pattern %q translates to an invalid regexp: %v", pattern, err)
		}
		if got, want := m(s), re.MatchString(s); got != want {
			t.Fatalf("LIKE %q on %q: matcher %v, regexp %v", pattern, s, got, want)
		}
	})
}

// FuzzJSONValue checks that JSON_VALUE never panics on arbitrary documents
// and paths.
func FuzzJSONValue(f *testing.F) {
	f.Add(`{"a":{"b":[1,{"c":"x"}]}}`, "$.a.b[1].c")
	f.Add(`[1,2`, "$[1]")
	f.Add(`{"a":"\ud83d\ude00"}`, "$.a")
	f.Fuzz(func(t *testing.T, doc, path string) {
		steps, err := parseJSONPath(path)
		if err != nil {
			return
		}
		jsonValue(doc, steps)
	})
}

// FuzzDateFormat checks that format patterns never panic and that what a
// pattern prints, it parses back (for patterns of numeric fields).
func FuzzDateFormat(f *testing.F) {
	f.Add("yyyy-MM-dd HH:mm:ss.SSS", int64(1586937900123000))
	f.Add("yyyyMMddHHmmss", int64(0))
	f.Add("dd/MM/yy h:mm a", int64(-1))
	f.Fuzz(func(t *testing.T, pattern string, micros int64) {
		df, err := parseDateFormat(pattern)
		if err != nil {
			return
		}
		out := df.format(nil, micros, 0)
		_, _, _ = df.parse(string(out))
	})
}
