package window

import (
	"strings"
	"testing"
)

func TestSpecValidate(t *testing.T) {
	tests := []struct {
		spec Spec
		err  string // "" for valid
	}{
		{Spec{Kind: Tumble, Size: 10 * mnt}, ""},
		{Spec{Kind: Tumble, Size: 10 * mnt, Offset: -9 * mnt}, ""},
		{Spec{Kind: Tumble, Size: 10 * mnt, Offset: 10 * mnt}, "offset 10 min must be smaller in magnitude than size 10 min"},
		{Spec{Kind: Tumble, Size: 10 * mnt, Offset: -10 * mnt}, "smaller in magnitude"},
		{Spec{Kind: Tumble}, "invalid TUMBLE: size must be at least 1 ms, got 0 ms"},
		{Spec{Kind: Tumble, Size: -mnt}, "size must be at least 1 ms, got -1 min"},
		{Spec{Kind: Tumble, Size: 500}, "size must be at least 1 ms, got 500 us"},
		{Spec{Kind: Tumble, Size: mnt, Slide: sec}, "parameters set that TUMBLE does not take: size=[1 min], slide=[1 s]"},
		{Spec{Kind: Hop, Size: 10 * mnt, Slide: 5 * mnt}, ""},
		{Spec{Kind: Hop, Size: 10 * mnt, Slide: 10 * mnt}, ""},
		{Spec{Kind: Hop, Size: 10 * mnt, Slide: 3 * mnt}, "invalid HOP: size 10 min must be an integral multiple of slide 3 min"},
		{Spec{Kind: Hop, Size: 10 * mnt}, "slide must be at least 1 ms"},
		{Spec{Kind: Hop, Size: 10 * mnt, Slide: 5 * mnt, Gap: 1}, "does not take"},
		{Spec{Kind: Cumulate, Size: 10 * mnt, Step: 2 * mnt}, ""},
		{Spec{Kind: Cumulate, Size: 10 * mnt, Step: 3 * mnt}, "invalid CUMULATE: max size 10 min must be an integral multiple of step 3 min"},
		{Spec{Kind: Cumulate, Step: 3 * mnt}, "max size must be at least 1 ms"},
		{Spec{Kind: Session, Gap: 5 * mnt}, ""},
		{Spec{Kind: Session}, "invalid SESSION: gap must be at least 1 ms"},
		{Spec{Kind: Session, Gap: 5 * mnt, Offset: mnt}, "session windows take no offset"},
		{Spec{Kind: Session, Gap: 5 * mnt, Size: mnt}, "does not take: size=[1 min], gap=[5 min]"},
		{Spec{Kind: Kind(9), Size: mnt}, "unknown kind 9"},
	}
	for _, tt := range tests {
		err := tt.spec.Validate()
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("%+v: unexpected error %v", tt.spec, err)
		case tt.err != "" && err == nil:
			t.Errorf("%+v: no error, want %q", tt.spec, tt.err)
		case tt.err != "" && !strings.Contains(err.Error(), tt.err):
			t.Errorf("%+v: error %q, want it to contain %q", tt.spec, err, tt.err)
		}
	}
}

func TestSpecString(t *testing.T) {
	tests := []struct {
		spec Spec
		want string
	}{
		{Spec{Kind: Tumble, Size: 10 * mnt}, "TUMBLE(size=[10 min])"},
		{Spec{Kind: Tumble, Size: 10 * mnt, Offset: mnt}, "TUMBLE(size=[10 min], offset=[1 min])"},
		{Spec{Kind: Tumble, Size: 10 * mnt, Offset: -mnt}, "TUMBLE(size=[10 min], offset=[-1 min])"},
		{Spec{Kind: Hop, Size: 10 * mnt, Slide: 5 * mnt}, "HOP(size=[10 min], slide=[5 min])"},
		{Spec{Kind: Cumulate, Size: 24 * 60 * mnt, Step: 60 * mnt}, "CUMULATE(max_size=[1 d], step=[1 h])"},
		{Spec{Kind: Session, Gap: 1500 * ms}, "SESSION(gap=[1500 ms])"},
		{Spec{Kind: Tumble, Size: 2500}, "TUMBLE(size=[2500 us])"},
	}
	for _, tt := range tests {
		if got := tt.spec.String(); got != tt.want {
			t.Errorf("got %s, want %s", got, tt.want)
		}
	}
	if got := Kind(7).String(); got != "Kind(7)" {
		t.Errorf("got %s", got)
	}
}

func TestAlignedStart(t *testing.T) {
	// Flink's "Window Offset" example: a row at 2021-06-30 00:00:04 in a
	// 10 min TUMBLE window under various offsets.
	at := ts(t, "2021-06-30 00:00:04")
	for _, tt := range []struct {
		offset int64
		start  string
	}{
		{-16 * mnt, "2021-06-29 23:54"},
		{-6 * mnt, "2021-06-29 23:54"},
		{-4 * mnt, "2021-06-29 23:56"},
		{0, "2021-06-30 00:00"},
		{4 * mnt, "2021-06-29 23:54"},
		{6 * mnt, "2021-06-29 23:56"},
		{16 * mnt, "2021-06-29 23:56"},
	} {
		if got := alignedStart(at, tt.offset, 10*mnt); got != ts(t, tt.start) {
			t.Errorf("offset %s: start %s, want %s", FormatDuration(tt.offset), fmtTS(got), tt.start)
		}
	}
	// Negative timestamps floor towards minus infinity.
	for _, tt := range []struct{ t, offset, size, want int64 }{
		{-1, 0, 10, -10},
		{-10, 0, 10, -10},
		{-11, 0, 10, -20},
		{0, 0, 10, 0},
		{9, 0, 10, 0},
		{-1, 3, 10, -7},
		{-8, 3, 10, -17},
		{-8, -3, 10, -13},
	} {
		if got := alignedStart(tt.t, tt.offset, tt.size); got != tt.want {
			t.Errorf("alignedStart(%d, %d, %d) = %d, want %d", tt.t, tt.offset, tt.size, got, tt.want)
		}
	}
}
