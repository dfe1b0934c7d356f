package token

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Error is a positioned error in SQL source text: a syntax error from the
// scanner or the parser, or a semantic error from a later stage.
type Error struct {
	Pos Position
	Msg string
}

// NewError returns an Error at pos in file. The file may be nil, in which
// case the position carries only the byte offset.
func NewError(file *File, pos Pos, format string, args ...any) *Error {
	var p Position
	if file != nil {
		p = file.Position(pos)
	} else if pos.IsValid() {
		p = Position{Offset: pos.Offset()}
	}
	return &Error{Pos: p, Msg: fmt.Sprintf(format, args...)}
}

// Error implements the error interface as "file:line:col: message".
func (e *Error) Error() string {
	if e.Pos.IsValid() || e.Pos.Filename != "" {
		return e.Pos.String() + ": " + e.Msg
	}
	return e.Msg
}

// ErrorList is a list of Errors. The zero value is an empty list ready to
// use. Sort orders it by position; Err turns it into an error value.
type ErrorList []*Error

// Add appends an Error with the given position and message.
func (l *ErrorList) Add(pos Position, msg string) {
	*l = append(*l, &Error{Pos: pos, Msg: msg})
}

// Reset empties the list.
func (l *ErrorList) Reset() { *l = (*l)[:0] }

// Len, Swap and Less implement sort.Interface.
func (l ErrorList) Len() int { return len(l) }

// Swap implements sort.Interface.
func (l ErrorList) Swap(i, j int) { l[i], l[j] = l[j], l[i] }

// Less implements sort.Interface: by file name, line, column, then message.
func (l ErrorList) Less(i, j int) bool {
	a, b := &l[i].Pos, &l[j].Pos
	if a.Filename != b.Filename {
		return a.Filename < b.Filename
	}
	if a.Line != b.Line {
		return a.Line < b.Line
	}
	if a.Column != b.Column {
		return a.Column < b.Column
	}
	return l[i].Msg < l[j].Msg
}

// Sort sorts the list by position.
func (l ErrorList) Sort() { sort.Sort(l) }

// RemoveMultiples sorts the list by position and keeps only the first error
// of each line; of errors at the same position, the one added first wins (a
// scanner error before the parser error it causes).
func (l *ErrorList) RemoveMultiples() {
	sort.SliceStable(*l, func(i, j int) bool {
		a, b := &(*l)[i].Pos, &(*l)[j].Pos
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	var last Position
	i := 0
	for _, e := range *l {
		if e.Pos.Filename != last.Filename || e.Pos.Line != last.Line || i == 0 {
			last = e.Pos
			(*l)[i] = e
			i++
		}
	}
	*l = (*l)[:i]
}

// Error implements the error interface: the first error, and a count of the
// others.
func (l ErrorList) Error() string {
	switch len(l) {
	case 0:
		return "no errors"
	case 1:
		return l[0].Error()
	}
	return fmt.Sprintf("%s (and %d more errors)", l[0], len(l)-1)
}

// Err returns nil for an empty list and the list itself otherwise.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

// Format renders err for a terminal: every positioned error as
// "file:line:col: message", followed by the offending line of src and a caret
// under the column. Errors that are neither an *Error nor an ErrorList (nor
// wrap one) are rendered with their Error method.
func Format(err error, src []byte) string { return FormatMasked(err, src, nil) }

// FormatMasked is Format with mask, if not nil, applied to every message
// and every quoted line of src before they are shown (to hide passwords,
// say); the caret stays under the same text, wherever mask moved it.
func FormatMasked(err error, src []byte, mask func(string) string) string {
	if mask == nil {
		mask = func(s string) string { return s }
	}
	if err == nil {
		return ""
	}
	var list ErrorList
	switch e := err.(type) {
	case ErrorList:
		list = e
	case *Error:
		list = ErrorList{e}
	default:
		var el ErrorList
		var one *Error
		switch {
		case errors.As(err, &el):
			list = el
		case errors.As(err, &one):
			list = ErrorList{one}
		default:
			return mask(err.Error())
		}
	}
	var lines []int
	if src != nil {
		lines = []int{0}
		for i, c := range src {
			if c == '\n' {
				lines = append(lines, i+1)
			}
		}
	}
	var b strings.Builder
	for i, e := range list {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(mask(e.Error()))
		if !e.Pos.IsValid() || lines == nil {
			continue
		}
		line := lineOf(src, lines, e.Pos.Line)
		col := e.Pos.Column
		if col-1 <= len(line) {
			col = len(mask(line[:col-1])) + 1
		}
		line = mask(line)
		b.WriteByte('\n')
		b.WriteString(line)
		b.WriteByte('\n')
		for j := 0; j < col-1 && j < len(line); j++ {
			if line[j] == '\t' {
				b.WriteByte('\t')
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteByte('^')
	}
	return b.String()
}
