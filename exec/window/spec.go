package window

import (
	"fmt"
	"strconv"
	"strings"
)

// Kind is the kind of a window table-valued function.
type Kind int

// Window kinds, as Flink's window TVFs.
const (
	Tumble Kind = iota
	Hop
	Cumulate
	Session
)

// String returns the SQL name of the window function.
func (k Kind) String() string {
	switch k {
	case Tumble:
		return "TUMBLE"
	case Hop:
		return "HOP"
	case Cumulate:
		return "CUMULATE"
	case Session:
		return "SESSION"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Durations used by window arithmetic, in microseconds.
const (
	millisecond int64 = 1000
	// maxTimestampGap is what window_time is below window_end: windows are
	// TIMESTAMP(3) values, so the last instant of [start, end) is end - 1 ms.
	maxTimestampGap = millisecond
)

// Spec describes one window TVF call. All durations are microseconds.
type Spec struct {
	Kind Kind
	// Size is the window size of TUMBLE and HOP and the max size of
	// CUMULATE.
	Size int64
	// Slide is the slide of HOP.
	Slide int64
	// Step is the step of CUMULATE.
	Step int64
	// Gap is the inactivity gap of SESSION.
	Gap int64
	// Offset shifts the alignment of TUMBLE, HOP and CUMULATE windows, as
	// Flink's OFFSET argument: windows start at offset + k*size (k*slide,
	// k*step) for integer k, negative k included.
	Offset int64
	// LTZ is set when the time attribute is a TIMESTAMP_LTZ: windows are
	// aligned in the session time zone (see Zone) and window_time is a
	// TIMESTAMP_LTZ, as in Flink. EXPLAIN does not show it.
	LTZ bool
}

// Validate checks the spec against Flink's rules for window TVF
// aggregation: durations are positive (at least 1 ms, the precision of
// window bounds), a HOP size is an integral multiple of its slide, a
// CUMULATE max size an integral multiple of its step, a TUMBLE offset is
// smaller in magnitude than the size, and parameters a kind does not take
// are zero.
func (s Spec) Validate() error {
	switch s.Kind {
	case Tumble:
		if err := s.checkPositive("size", s.Size); err != nil {
			return err
		}
		if s.Offset <= -s.Size || s.Offset >= s.Size {
			return fmt.Errorf("invalid %s: offset %s must be smaller in magnitude than size %s",
				s.Kind, FormatDuration(s.Offset), FormatDuration(s.Size))
		}
		return s.checkUnused(s.Slide == 0 && s.Step == 0 && s.Gap == 0)
	case Hop:
		if err := s.checkPositive("size", s.Size); err != nil {
			return err
		}
		if err := s.checkPositive("slide", s.Slide); err != nil {
			return err
		}
		if s.Size%s.Slide != 0 {
			return fmt.Errorf("invalid %s: size %s must be an integral multiple of slide %s",
				s.Kind, FormatDuration(s.Size), FormatDuration(s.Slide))
		}
		return s.checkUnused(s.Step == 0 && s.Gap == 0)
	case Cumulate:
		if err := s.checkPositive("max size", s.Size); err != nil {
			return err
		}
		if err := s.checkPositive("step", s.Step); err != nil {
			return err
		}
		if s.Size%s.Step != 0 {
			return fmt.Errorf("invalid %s: max size %s must be an integral multiple of step %s",
				s.Kind, FormatDuration(s.Size), FormatDuration(s.Step))
		}
		return s.checkUnused(s.Slide == 0 && s.Gap == 0)
	case Session:
		if err := s.checkPositive("gap", s.Gap); err != nil {
			return err
		}
		if s.Offset != 0 {
			return fmt.Errorf("invalid %s: session windows take no offset", s.Kind)
		}
		return s.checkUnused(s.Size == 0 && s.Slide == 0 && s.Step == 0)
	}
	return fmt.Errorf("invalid window: unknown kind %d", int(s.Kind))
}

func (s Spec) checkPositive(name string, d int64) error {
	if d < millisecond {
		return fmt.Errorf("invalid %s: %s must be at least 1 ms, got %s", s.Kind, name, FormatDuration(d))
	}
	return nil
}

func (s Spec) checkUnused(ok bool) error {
	if !ok {
		return fmt.Errorf("invalid %s: parameters set that %s does not take: %s", s.Kind, s.Kind, s.params(true))
	}
	return nil
}

// String prints the spec as Flink's EXPLAIN does, e.g.
// "TUMBLE(size=[10 min])" or "HOP(size=[10 min], slide=[5 min])".
func (s Spec) String() string {
	return s.Kind.String() + "(" + s.params(false) + ")"
}

func (s Spec) params(all bool) string {
	var b strings.Builder
	add := func(name string, d int64, always bool) {
		if !always && d == 0 {
			return
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(name)
		b.WriteString("=[")
		b.WriteString(FormatDuration(d))
		b.WriteString("]")
	}
	switch {
	case all:
		add("size", s.Size, false)
		add("slide", s.Slide, false)
		add("step", s.Step, false)
		add("gap", s.Gap, false)
	case s.Kind == Tumble:
		add("size", s.Size, true)
	case s.Kind == Hop:
		add("size", s.Size, true)
		add("slide", s.Slide, true)
	case s.Kind == Cumulate:
		add("max_size", s.Size, true)
		add("step", s.Step, true)
	case s.Kind == Session:
		add("gap", s.Gap, true)
	}
	add("offset", s.Offset, false)
	return b.String()
}

// FormatDuration prints a duration in microseconds with the largest unit
// that divides it exactly, as Flink prints window parameters: "10 min",
// "1 h", "500 ms", "1 d". Durations that are not whole milliseconds print
// in "us".
func FormatDuration(us int64) string {
	units := [...]struct {
		name string
		n    int64
	}{
		{"d", 24 * 3600 * 1_000_000},
		{"h", 3600 * 1_000_000},
		{"min", 60 * 1_000_000},
		{"s", 1_000_000},
		{"ms", 1000},
	}
	if us == 0 {
		return "0 ms"
	}
	for _, u := range units {
		if us%u.n == 0 {
			return strconv.FormatInt(us/u.n, 10) + " " + u.name
		}
	}
	return strconv.FormatInt(us, 10) + " us"
}

// alignedStart returns the start of the window of the given size that holds
// t, for windows aligned at offset + k*size. It floors for negative t.
func alignedStart(t, offset, size int64) int64 {
	r := (t - offset) % size
	if r < 0 {
		r += size
	}
	return t - r
}
