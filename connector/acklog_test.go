package connector

import (
	"slices"
	"testing"
)

func TestAckLog(t *testing.T) {
	var l AckLog[int]
	if n := l.Covered(5); n != 0 {
		t.Fatalf("an empty log covers %d", n)
	}
	for i := range 3 {
		l.Add(i)
	}
	l.Barrier(1) // after 0, 1, 2
	l.Add(3)
	l.Barrier(2) // after 0..3
	l.Add(4)
	l.Barrier(3) // after 0..4
	l.Add(5)
	// Checkpoint 2 completes first (1 was never confirmed alone): it
	// covers what came before its barrier, and 1's.
	n := l.Covered(2)
	if got := l.Pending()[:n]; !slices.Equal(got, []int{0, 1, 2, 3}) {
		t.Fatalf("checkpoint 2 covers %v", got)
	}
	l.Drop(n)
	if !slices.Equal(l.Pending(), []int{4, 5}) {
		t.Fatalf("left %v", l.Pending())
	}
	// An older checkpoint completing late covers nothing more.
	if n := l.Covered(1); n != 0 {
		t.Fatalf("checkpoint 1, after 2, covers %d", n)
	}
	if n := l.Covered(3); !slices.Equal(l.Pending()[:n], []int{4}) {
		t.Fatalf("checkpoint 3 covers %v", l.Pending()[:n])
	} else {
		l.Drop(n)
	}
	l.Add(6)
	l.Barrier(4)
	// The final commit covers everything, barriers or not.
	l.Add(7)
	if n := l.Covered(-1); !slices.Equal(l.Pending()[:n], []int{5, 6, 7}) {
		t.Fatalf("the final commit covers %v", l.Pending()[:n])
	} else {
		l.Drop(n)
	}
	if l.Len() != 0 || l.Covered(4) != 0 {
		t.Fatal("the log is not empty after the final commit")
	}
	// Entries dropped without acknowledgement (a lost connection) move
	// the barriers with them.
	for i := range 4 {
		l.Add(i)
	}
	l.Barrier(9)
	l.Drop(3)
	if n := l.Covered(9); n != 1 {
		t.Fatalf("after dropping 3 of 4, checkpoint 9 covers %d, want 1", n)
	}
}
