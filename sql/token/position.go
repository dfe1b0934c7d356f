package token

import (
	"bytes"
	"sort"
	"strconv"
)

// Pos is a compact source position: the byte offset of a character plus one.
// The zero value, NoPos, means "no position".
type Pos int

// NoPos is the zero Pos: no position.
const NoPos Pos = 0

// IsValid reports whether p is a position.
func (p Pos) IsValid() bool { return p != NoPos }

// Offset returns the zero-based byte offset of p; it is -1 for NoPos.
func (p Pos) Offset() int { return int(p) - 1 }

// PosOf returns the Pos of the byte at offset.
func PosOf(offset int) Pos { return Pos(offset + 1) }

// Position is a human-readable source position.
type Position struct {
	Filename string // file name, may be empty
	Offset   int    // byte offset, starting at 0
	Line     int    // line number, starting at 1
	Column   int    // column number in bytes, starting at 1
}

// IsValid reports whether the position is valid.
func (p Position) IsValid() bool { return p.Line > 0 }

// String returns "file:line:col", "line:col" without a file name, or "-" for
// an invalid position (with the file name, if any).
func (p Position) String() string {
	s := p.Filename
	if p.IsValid() {
		if s != "" {
			s += ":"
		}
		s += strconv.Itoa(p.Line) + ":" + strconv.Itoa(p.Column)
	}
	if s == "" {
		s = "-"
	}
	return s
}

// File is one source text with its line table. It maps Pos values to
// Positions and gives access to source lines for error rendering.
type File struct {
	name  string
	src   []byte
	lines []int // offsets of the first byte of each line
}

// NewFile returns a File for src. The name may be empty.
func NewFile(name string, src []byte) *File {
	lines := make([]int, 1, 1+len(src)/32)
	for i := 0; ; {
		j := bytes.IndexByte(src[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
		lines = append(lines, i)
	}
	return &File{name: name, src: src, lines: lines}
}

// Name returns the file name.
func (f *File) Name() string { return f.name }

// Source returns the source text. The caller must not modify it.
func (f *File) Source() []byte { return f.src }

// Size returns the length of the source text in bytes.
func (f *File) Size() int { return len(f.src) }

// LineCount returns the number of lines.
func (f *File) LineCount() int { return len(f.lines) }

// Pos returns the Pos of the byte at offset, clamped to the file.
func (f *File) Pos(offset int) Pos {
	if offset < 0 {
		offset = 0
	}
	if offset > len(f.src) {
		offset = len(f.src)
	}
	return Pos(offset + 1)
}

// Position returns the Position of p. An invalid p gives a Position with only
// the file name set; a p past the end of the source is clamped to the end.
func (f *File) Position(p Pos) Position {
	if !p.IsValid() {
		return Position{Filename: f.name}
	}
	off := p.Offset()
	if off > len(f.src) {
		off = len(f.src)
	}
	i := sort.Search(len(f.lines), func(i int) bool { return f.lines[i] > off }) - 1
	return Position{Filename: f.name, Offset: off, Line: i + 1, Column: off - f.lines[i] + 1}
}

// Line returns the text of line n (starting at 1) without its line
// terminator, or "" if there is no such line.
func (f *File) Line(n int) string {
	return lineOf(f.src, f.lines, n)
}

func lineOf(src []byte, lines []int, n int) string {
	if n < 1 || n > len(lines) {
		return ""
	}
	start := lines[n-1]
	end := len(src)
	if n < len(lines) {
		end = lines[n] - 1
	}
	if end > start && src[end-1] == '\r' {
		end--
	}
	return string(src[start:end])
}
