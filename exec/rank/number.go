package rank

// Type is the numbering function of a Top-N.
type Type uint8

// Numbering functions, as SQL's.
const (
	// RowNumber numbers rows 1, 2, 3, ...; rows that tie get distinct
	// numbers in arrival order.
	RowNumber Type = iota
	// Standard is RANK(): rows that tie share the number of the first of
	// them, and the numbers after a tie skip (1, 1, 3).
	Standard
	// Dense is DENSE_RANK(): rows that tie share a number, and the numbers
	// after a tie do not skip (1, 1, 2).
	Dense
)

// String returns the SQL name of the function.
func (t Type) String() string {
	switch t {
	case Standard:
		return "RANK"
	case Dense:
		return "DENSE_RANK"
	}
	return "ROW_NUMBER"
}
