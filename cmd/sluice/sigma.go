package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/sigma"
)

// newSigma is `sluice sigma`: Sigma rules in, a SQL script out.
func newSigma(stdout, stderr io.Writer) *cobra.Command {
	var mappingFile, table, alerts, output, ruleset string
	var columns []string
	var createAlerts, check, statementSet bool
	cmd := &cobra.Command{
		Use:   "sigma [--mapping FILE] [--table T] [--alerts T] [--ruleset NAME] [-o FILE] RULES...",
		Short: "Translate Sigma detection rules into a SQL script of rules over a log table",
		Long: `Sigma reads Sigma rules (YAML files, or directories searched for *.yml and
*.yaml) and writes a SQL script that runs them over a table: a ruleset of the
detection rules (CREATE RULESET, named by --ruleset, default sigma) whose alerts
go into the alerts table, and for each correlation rule (event_count,
value_count, temporal, ...) a metric group of its aggregate over a sliding
window of its time span and a ruleset that tests its condition, whose alerts go
into the correlation alerts table. With --statement-set, the script is instead
a statement set of one INSERT per rule, correlations as tumbling-window
aggregations. The mapping file names the column of each Sigma field, the table,
the event-time column and more (see docs/sigma.md); without one, a field is the
column of its name.

Rules that cannot be translated are listed on standard error with the reason
(and at the end of the script, as comments); the others are written. The exit
status is 1 when an input is not valid YAML or cannot be read (nothing is
written then), or when no rule could be translated. With --check, each rule is
planned over the tables the mapping's prelude creates, and the rules the engine
refuses (a column the table lacks) are reported as not translated.`,
		Example: `  sluice sigma --mapping mapping.yml rules/ -o rules.sql
  sluice sigma --table events --create-alerts --ruleset windows rule.yml`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			quiet, _ := cmd.Flags().GetBool("quiet")
			fail := func(err error) error {
				fmt.Fprintln(stderr, "error:", err)
				return exitError{err}
			}
			m := &sigma.Mapping{}
			if mappingFile != "" {
				var err error
				if m, err = sigma.LoadMapping(mappingFile); err != nil {
					return fail(err)
				}
			}
			if table != "" {
				m.Table = table
			}
			if alerts != "" {
				m.Alerts = alerts
			}
			if cmd.Flags().Changed("columns") {
				m.AlertColumns = columns
			}
			if ruleset != "" && !sqlName.MatchString(ruleset) {
				return fail(fmt.Errorf("--ruleset %q is not a SQL name (letters, digits and _, not first a digit)", ruleset))
			}
			opts := sigma.ScriptOptions{CreateAlerts: createAlerts, StatementSet: statementSet, Ruleset: ruleset}
			if m.Table == "" && !logsourceTables(m) {
				return fail(errors.New("no table to read: give --table or table: in the mapping"))
			}
			docs, err := sigma.Load(args...)
			if err != nil {
				return fail(err)
			}
			rs := sigma.Translate(docs, m)
			if check {
				if strings.TrimSpace(m.Prelude) == "" {
					return fail(errors.New("--check plans each rule over the tables of the mapping's prelude: give it the table's CREATE TABLE"))
				}
				e, err := sluice.Open(sluice.Options{Stdout: io.Discard})
				if err != nil {
					return fail(err)
				}
				n := 0
				err = sigma.Check(rs, opts, func(sql string) error {
					n++
					_, err := e.Explain(fmt.Sprintf("check-%d.sql", n), []byte(sql))
					return err
				})
				e.Close()
				if err != nil {
					return fail(fmt.Errorf("the prelude: %w", err))
				}
			}
			for _, f := range rs.Failures {
				fmt.Fprintln(stderr, "not translated:", f)
			}
			script := sigma.Script(rs, opts)
			alerting := len(rs.Alerting())
			if !quiet {
				fmt.Fprintf(stderr, "sluice sigma: %d of %d rules translated (%d alerting), %d not\n",
					len(rs.Queries), len(rs.Queries)+len(rs.Failures), alerting, len(rs.Failures))
			}
			if alerting == 0 {
				return fail(errors.New("no rule could be translated"))
			}
			if output == "" || output == "-" {
				_, err = io.WriteString(stdout, script)
			} else {
				err = os.WriteFile(output, []byte(script), 0o644)
			}
			if err != nil {
				return fail(err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&mappingFile, "mapping", "", "the mapping file: Sigma fields to columns, the table, the time column (YAML)")
	cmd.Flags().StringVar(&table, "table", "", "the table the rules read (over the mapping's)")
	cmd.Flags().StringVar(&alerts, "alerts", "", "the table alerts go to (default alerts; correlations' to <alerts>_correlations)")
	cmd.Flags().StringSliceVar(&columns, "columns", nil, "the columns an alert carries beside the rule and severity (over the mapping's alert_columns)")
	cmd.Flags().BoolVar(&createAlerts, "create-alerts", false, "also write CREATE TABLE statements for the alerts tables (print connector unless the mapping's alerts_with says)")
	cmd.Flags().BoolVar(&check, "check", false, "plan each rule over the tables of the mapping's prelude, and report those the engine refuses (a column the table lacks) as not translated")
	cmd.Flags().StringVar(&ruleset, "ruleset", "", "the name of the detection rules' ruleset (over the mapping's ruleset; default sigma); the correlations' objects' names begin with it")
	cmd.Flags().BoolVar(&statementSet, "statement-set", false, "write a statement set of one INSERT per rule (correlations over tumbling windows) instead of rulesets")
	cmd.Flags().StringVarP(&output, "output", "o", "", "write the script to this file instead of standard output")
	return cmd
}

// sqlName is what --ruleset takes.
var sqlName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// logsourceTables reports whether every logsource of m names its table.
func logsourceTables(m *sigma.Mapping) bool {
	if len(m.Logsources) == 0 {
		return false
	}
	for _, l := range m.Logsources {
		if strings.TrimSpace(l.Table) == "" {
			return false
		}
	}
	return true
}
