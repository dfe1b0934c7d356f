package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/sluicesql/sluice/client"
)

// newPreview returns `sluice job preview`: a script's SELECT run on the
// server for a few rows or seconds, its rows printed as they come.
// connect returns the client of the job commands' flags, and output
// their -o.
func newPreview(stdout, stderr io.Writer, connect func() *client.Client, output *string) *cobra.Command {
	var maxRows int
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "preview FILE.sql [--max-rows N] [--timeout 10s]",
		Short: "Run a script's SELECT on the server for a few rows or seconds and print its rows as they come",
		Long: `Preview runs FILE (DDL, SET and one SELECT, over the server's catalog) in a
throwaway session of the server, which keeps no state, and prints its rows as
they come, each with its change kind (+I insert, -U/+U update, -D delete),
until --max-rows rows (at most 10000), --timeout (at most 60s) or the query's
end. -o json prints one JSON object a line: {"columns": [...]}, then
{"kind": ..., "values": [...]} a row, then {"end": {"rows": n, "reason": ...}}.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if *output != "table" && *output != "json" {
				return fmt.Errorf("-o %s: expected table or json", *output)
			}
			src, err := readSQL(args[0])
			if err != nil {
				return err
			}
			var p rowPrinter = &tablePrinter{w: stdout}
			if *output == "json" {
				p = &jsonPrinter{enc: json.NewEncoder(stdout)}
			}
			// The server ends the preview by its timeout; this one only
			// bounds a server that does not answer.
			ctx, cancel := context.WithTimeout(context.Background(), cmp(timeout, 10*time.Second)+time.Minute)
			defer cancel()
			end, err := connect().Preview(ctx, src.text, maxRows, timeout, p.columns, p.row)
			if err != nil {
				var pe *client.PreviewError
				if errors.As(err, &pe) {
					p.failed()
				}
				fmt.Fprintln(stderr, formatClientError(err, src))
				return exitError{err}
			}
			p.end(end)
			return nil
		},
	}
	cmd.Flags().IntVar(&maxRows, "max-rows", 0, "stop after this many rows (default: the server's, 100)")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "stop after this long (default: the server's, 10s)")
	return cmd
}

func cmp(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// rowPrinter prints a preview as it streams.
type rowPrinter interface {
	columns([]client.Column)
	row(kind string, values []any)
	end(client.PreviewEnd)
	failed()
}

// tablePrinter prints a preview as Flink's SQL client does in tableau
// mode: a header, then a line a row as it comes, its change kind first;
// a column's width is chosen from its name and type, and a longer value
// is cut short.
type tablePrinter struct {
	w      io.Writer
	widths []int
	rule   string
}

func (p *tablePrinter) columns(cols []client.Column) {
	p.widths = []int{2}
	names := []string{"op"}
	for _, c := range cols {
		p.widths = append(p.widths, max(utf8.RuneCountInString(c.Name), typeWidth(c.Type)))
		names = append(names, c.Name)
	}
	var b strings.Builder
	for _, w := range p.widths {
		b.WriteString("+" + strings.Repeat("-", w+2))
	}
	p.rule = b.String() + "+\n"
	fmt.Fprint(p.w, p.rule)
	p.line(names)
	fmt.Fprint(p.w, p.rule)
}

func (p *tablePrinter) line(cells []string) {
	var b strings.Builder
	for i, c := range cells {
		w := p.widths[min(i, len(p.widths)-1)]
		if n := utf8.RuneCountInString(c); n > w {
			c = string([]rune(c)[:max(w-3, 0)]) + "..."
		}
		b.WriteString("| " + strings.Repeat(" ", max(w-utf8.RuneCountInString(c), 0)) + c + " ")
	}
	fmt.Fprint(p.w, b.String()+"|\n")
}

func (p *tablePrinter) row(kind string, values []any) {
	cells := []string{kind}
	for _, v := range values {
		cells = append(cells, formatCell(v))
	}
	p.line(cells)
}

func (p *tablePrinter) end(e client.PreviewEnd) {
	fmt.Fprint(p.w, p.rule)
	why := map[string]string{"max_rows": "the most rows asked for", "timeout": "the timeout", "finished": "the end of the query's input"}[e.Reason]
	fmt.Fprintf(p.w, "Received a total of %d rows (stopped at %s)\n", e.Rows, cmpOr(why, e.Reason))
}

func (p *tablePrinter) failed() {
	if p.rule != "" {
		fmt.Fprint(p.w, p.rule)
	}
}

// typeWidth is the width a column of SQL type t is given.
func typeWidth(t string) int {
	t = strings.TrimSuffix(t, " NOT NULL")
	switch {
	case t == "BOOLEAN":
		return 5
	case t == "TINYINT", t == "SMALLINT", t == "INT":
		return 11
	case t == "BIGINT":
		return 20
	case t == "DATE":
		return 10
	case strings.HasPrefix(t, "TIMESTAMP"):
		return 29
	}
	return 20
}

// formatCell is a value as the table shows it.
func formatCell(v any) string {
	switch v := v.(type) {
	case nil:
		return "<NULL>"
	case bool:
		if v {
			return "TRUE"
		}
		return "FALSE"
	case string:
		return v
	case json.Number:
		return v.String()
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// jsonPrinter prints a preview as one JSON object a line.
type jsonPrinter struct {
	enc *json.Encoder
}

func (p *jsonPrinter) columns(cols []client.Column) {
	p.enc.Encode(map[string]any{"columns": cols})
}

func (p *jsonPrinter) row(kind string, values []any) {
	p.enc.Encode(map[string]any{"kind": kind, "values": values})
}

func (p *jsonPrinter) end(e client.PreviewEnd) { p.enc.Encode(map[string]any{"end": e}) }

func (p *jsonPrinter) failed() {}
