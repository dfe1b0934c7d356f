package parser

import "testing"

func TestCompleteStatements(t *testing.T) {
	for _, c := range []struct {
		src  string
		want string // the complete prefix
	}{
		{"", ""},
		{"SELECT 1", ""},
		{"SELECT 1;", "SELECT 1;"},
		{"SELECT 1; SELECT", "SELECT 1;"},
		{"SELECT 1;\nSELECT 2;\n", "SELECT 1;\nSELECT 2;"},
		// A ';' that ends a line inside a string, a quoted identifier or a
		// comment ends nothing.
		{"SELECT 'a;\nb';", "SELECT 'a;\nb';"},
		{"SELECT 'a;\n", ""},
		{"SELECT 'it''s;\n", ""},
		{"SELECT `odd;\n", ""},
		{"SELECT 1 -- done;\n", ""},
		{"SELECT 1 /* a;\n", ""},
		{"SELECT 1 /* a; */;", "SELECT 1 /* a; */;"},
		// A statement set ends at the ';' after its END; CASE ... END
		// inside it does not end it.
		{"EXECUTE STATEMENT SET BEGIN\nINSERT INTO a SELECT 1;\n", ""},
		{"EXECUTE STATEMENT SET BEGIN\nINSERT INTO a SELECT CASE WHEN x THEN 1 END FROM t;\nEND;", "EXECUTE STATEMENT SET BEGIN\nINSERT INTO a SELECT CASE WHEN x THEN 1 END FROM t;\nEND;"},
		{"BEGIN STATEMENT SET;\nINSERT INTO a SELECT 1;\n", ""},
		{"BEGIN STATEMENT SET;\nINSERT INTO a SELECT 1;\nEND;\nSELECT", "BEGIN STATEMENT SET;\nINSERT INTO a SELECT 1;\nEND;"},
	} {
		if got := CompleteStatements([]byte(c.src)); c.src[:got] != c.want {
			t.Errorf("CompleteStatements(%q) = %q, want %q", c.src, c.src[:got], c.want)
		}
	}
}
