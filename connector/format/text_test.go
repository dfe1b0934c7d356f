package format

import "testing"

func TestTrimBOMAndBlank(t *testing.T) {
	if got := string(TrimBOM([]byte("\xef\xbb\xbf{}"))); got != "{}" {
		t.Errorf("TrimBOM = %q", got)
	}
	if got := string(TrimBOM([]byte("{\xef\xbb\xbf}"))); got != "{\xef\xbb\xbf}" {
		t.Errorf("TrimBOM of an inner mark = %q", got)
	}
	for _, s := range []string{"", " ", "\t \r\n", "\xef\xbb\xbf", "\xef\xbb\xbf  "} {
		if !Blank([]byte(s)) {
			t.Errorf("Blank(%q) = false", s)
		}
	}
	for _, s := range []string{"{}", " x ", "\xef\xbb"} {
		if Blank([]byte(s)) {
			t.Errorf("Blank(%q) = true", s)
		}
	}
}
