package expr

import (
	"testing"

	"github.com/sluicesql/sluice/types"
)

// Fold returns an expression with nothing to fold as it is, and folds the
// others into new nodes, leaving the expression it was given unchanged.
func TestFoldKeepsWhatItDoesNotFold(t *testing.T) {
	k := newKit()
	col := &Column{Index: 0, Name: "s", T: types.String}
	plain := k.call("AND", k.call("LIKE", col, S("%x%")), k.call("=", k.cast(col, types.Int), I(3)))
	if f, _ := Fold(plain, nil); f != plain {
		t.Errorf("Fold(%s) copied it", plain)
	}
	folding := k.call("AND", k.call("LIKE", col, k.call("CONCAT", S("%"), S("x"))), k.call("=", k.cast(col, types.Int), I(3)))
	before := folding.String()
	f, _ := Fold(folding, nil)
	if got, want := f.String(), "((s LIKE '%x') AND (CAST(s AS INT) = 3))"; got != want {
		t.Errorf("Fold(%s) = %s, want %s", before, got, want)
	}
	if folding.String() != before {
		t.Errorf("Fold changed its operand: %s, was %s", folding, before)
	}
	// The operand that had nothing to fold is shared, not copied.
	if f.(*Call).Args[1] != folding.(*Call).Args[1] {
		t.Error("Fold copied an operand with nothing to fold")
	}
}
