package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/sluicesql/sluice/client"
)

// newJob returns `sluice job`: the commands that manage the jobs of a
// running server through its REST API.
func newJob(stdout, stderr io.Writer) *cobra.Command {
	var server, token, output string
	var timeout time.Duration
	job := &cobra.Command{
		Use:   "job",
		Short: "Manage the jobs of a Sluice server (sluice serve)",
		Long: `The job commands talk to a server started with 'sluice serve': --server
(or SLUICE_SERVER, default http://127.0.0.1:8081) says where, --token (or
SLUICE_TOKEN) authenticates. They print tables; -o json prints the server's
JSON for scripts.`,
	}
	job.PersistentFlags().StringVar(&server, "server", "", "the server's URL (default $SLUICE_SERVER, else http://127.0.0.1:8081)")
	job.PersistentFlags().StringVar(&token, "token", "", "the API token (default $SLUICE_TOKEN)")
	job.PersistentFlags().StringVarP(&output, "output", "o", "table", "output format: table or json")
	job.PersistentFlags().DurationVar(&timeout, "timeout", time.Minute, "how long to wait for the server")

	// connect returns a client of the server the flags name.
	connect := func() *client.Client {
		c := &client.Client{Server: server, Token: token}
		if c.Server == "" {
			c.Server = cmpOr(os.Getenv("SLUICE_SERVER"), "http://127.0.0.1:8081")
		}
		if c.Token == "" {
			c.Token = os.Getenv("SLUICE_TOKEN")
		}
		return c
	}

	// call runs f with a client and prints its result (v) as JSON or by
	// table; an error from the server is printed with the SQL's position
	// when it has one.
	call := func(src *sqlSource, f func(ctx context.Context, c *client.Client) (any, error), table func(w io.Writer, v any)) error {
		if output != "table" && output != "json" {
			return fmt.Errorf("-o %s: expected table or json", output)
		}
		c := connect()
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		v, err := f(ctx, c)
		if err != nil {
			var ce *client.Error
			if errors.As(err, &ce) && ce.Update != nil {
				printResult(stdout, output, ce.Update, table)
			}
			fmt.Fprintln(stderr, formatClientError(err, src))
			return exitError{err}
		}
		if v != nil {
			printResult(stdout, output, v, table)
		}
		return nil
	}

	var name string
	var labels []string
	submit := &cobra.Command{
		Use:   "submit FILE.sql --name NAME",
		Short: "Publish a job and start it",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, err := readSQL(args[0])
			if err != nil {
				return err
			}
			ls, err := parseLabels(labels)
			if err != nil {
				return err
			}
			if name == "" {
				return errors.New("--name is required")
			}
			return call(src, func(ctx context.Context, c *client.Client) (any, error) {
				return c.Submit(ctx, name, src.text, ls)
			}, jobTable)
		},
	}
	submit.Flags().StringVar(&name, "name", "", "the job's name (its state belongs to it)")
	submit.Flags().StringArrayVarP(&labels, "label", "l", nil, "a label, key=value (repeatable)")

	var listLabels []string
	list := &cobra.Command{
		Use:   "list",
		Short: "List the jobs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ls, err := parseLabels(listLabels)
			if err != nil {
				return err
			}
			return call(nil, func(ctx context.Context, c *client.Client) (any, error) {
				jobs, err := c.Jobs(ctx, ls)
				return jobList{jobs}, err
			}, jobsTable)
		},
	}
	list.Flags().StringArrayVarP(&listLabels, "label", "l", nil, "only jobs with this label, key=value (repeatable)")

	show := &cobra.Command{
		Use:   "show NAME",
		Short: "Show a job: its SQL, plan, status, metrics and last errors",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return call(nil, func(ctx context.Context, c *client.Client) (any, error) {
				return c.Job(ctx, args[0])
			}, jobDetail)
		},
	}

	explain := &cobra.Command{
		Use:   "explain FILE.sql",
		Short: "Print the plan of a script's job, as the server would run it, without running it",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, err := readSQL(args[0])
			if err != nil {
				return err
			}
			return call(src, func(ctx context.Context, c *client.Client) (any, error) {
				plan, err := c.Explain(ctx, src.text)
				return map[string]string{"plan": plan}, err
			}, func(w io.Writer, v any) { fmt.Fprint(w, ensureNewline(v.(map[string]string)["plan"])) })
		},
	}

	var now bool
	stop := &cobra.Command{
		Use:   "stop NAME",
		Short: "Stop a job with a final checkpoint (--now: at once)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return call(nil, func(ctx context.Context, c *client.Client) (any, error) {
				return c.Stop(ctx, args[0], now)
			}, jobTable)
		},
	}
	stop.Flags().BoolVar(&now, "now", false, "stop at once, without a final checkpoint (a resume replays from the last one)")

	resume := &cobra.Command{
		Use:   "resume NAME",
		Short: "Run a stopped job again from its state",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return call(nil, func(ctx context.Context, c *client.Client) (any, error) {
				return c.Resume(ctx, args[0])
			}, jobTable)
		},
	}

	del := &cobra.Command{
		Use:   "delete NAME",
		Short: "Stop a job and delete it with its versions and its state",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return call(nil, func(ctx context.Context, c *client.Client) (any, error) {
				if err := c.Delete(ctx, args[0]); err != nil {
					return nil, err
				}
				return map[string]string{"deleted": args[0]}, nil
			}, func(w io.Writer, v any) { fmt.Fprintf(w, "deleted %s\n", v.(map[string]string)["deleted"]) })
		},
	}

	versions := &cobra.Command{
		Use:   "versions NAME",
		Short: "List the kept versions of a job",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return call(nil, func(ctx context.Context, c *client.Client) (any, error) {
				vs, err := c.Versions(ctx, args[0])
				return versionList{vs}, err
			}, versionsTable)
		},
	}

	var uo client.UpdateOptions
	update := &cobra.Command{
		Use:   "update NAME FILE.sql",
		Short: "Change a job's SQL: a new version, switched to with the job's state",
		Long: `Update makes a new version of the job from FILE and compares its plan with
the running one: per source, stateful operator and sink, whether its state
carries over, starts from zero (new) or is dropped. An update that would drop
state is refused unless --allow-state-loss; --dry-run only prints the report.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, err := readSQL(args[1])
			if err != nil {
				return err
			}
			return call(src, func(ctx context.Context, c *client.Client) (any, error) {
				return c.Update(ctx, args[0], src.text, uo)
			}, updateTable)
		},
	}
	rollback := &cobra.Command{
		Use:   "rollback NAME VERSION",
		Short: "Make a kept version the running one again (as an update to its SQL)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			v, err := strconv.Atoi(strings.TrimPrefix(args[1], "v"))
			if err != nil {
				return fmt.Errorf("VERSION %q: expected a number", args[1])
			}
			return call(nil, func(ctx context.Context, c *client.Client) (any, error) {
				return c.Rollback(ctx, args[0], v, uo)
			}, updateTable)
		},
	}
	for _, c := range []*cobra.Command{update, rollback} {
		c.Flags().BoolVar(&uo.DryRun, "dry-run", false, "only report what would happen to the state")
		c.Flags().BoolVar(&uo.AllowStateLoss, "allow-state-loss", false, "apply the update even if it drops state")
	}
	job.AddCommand(submit, list, show, explain, newPreview(stdout, stderr, connect, &output), stop, resume, del, versions, update, rollback)
	return job
}

// sqlSource is a script read from a file, for positioned errors.
type sqlSource struct {
	path, text string
}

func readSQL(path string) (*sqlSource, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return &sqlSource{path: path, text: string(b)}, nil
}

func parseLabels(ls []string) (map[string]string, error) {
	out := map[string]string{}
	for _, l := range ls {
		k, v, ok := strings.Cut(l, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("--label %q: expected key=value", l)
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out, nil
}

// formatClientError renders an error; one with a position in src shows
// the file, the line and a caret under the column, as `sluice run` does.
func formatClientError(err error, src *sqlSource) string {
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Line <= 0 || src == nil {
		return "error: " + err.Error()
	}
	lines := strings.Split(src.text, "\n")
	out := fmt.Sprintf("%s:%d:%d: %s", src.path, ce.Line, ce.Column, ce.Message)
	if ce.Line <= len(lines) {
		line := strings.TrimRight(lines[ce.Line-1], "\r")
		pad := strings.Map(func(r rune) rune {
			if r == '\t' {
				return '\t'
			}
			return ' '
		}, string([]rune(line)[:min(max(ce.Column-1, 0), len([]rune(line)))]))
		out += "\n" + line + "\n" + pad + "^"
	}
	return out
}

func printResult(w io.Writer, output string, v any, table func(io.Writer, any)) {
	if output == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.Encode(v)
		return
	}
	table(w, v)
}

type jobList struct {
	Jobs []client.Job `json:"jobs"`
}

type versionList struct {
	Versions []client.Version `json:"versions"`
}

func jobTable(w io.Writer, v any) { jobsTable(w, jobList{[]client.Job{*v.(*client.Job)}}) }

func jobsTable(w io.Writer, v any) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATUS\tVERSION\tROWS IN\tROWS OUT\tSTARTED\tLABELS")
	for _, j := range v.(jobList).Jobs {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\n", j.Name, j.Status, j.Version, j.Metrics.RowsIn, j.Metrics.RowsOut,
			formatTime(j.StartedAt), formatLabels(j.Labels))
	}
	tw.Flush()
}

func jobDetail(w io.Writer, v any) {
	j := v.(*client.Job)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "Name:\t%s\n", j.Name)
	fmt.Fprintf(tw, "Status:\t%s\n", j.Status)
	fmt.Fprintf(tw, "Version:\t%d\n", j.Version)
	if len(j.Labels) > 0 {
		fmt.Fprintf(tw, "Labels:\t%s\n", formatLabels(j.Labels))
	}
	fmt.Fprintf(tw, "Created:\t%s\n", formatTime(j.CreatedAt))
	fmt.Fprintf(tw, "Started:\t%s\n", formatTime(j.StartedAt))
	if j.StoppedAt != nil {
		fmt.Fprintf(tw, "Stopped:\t%s\n", formatTime(j.StoppedAt))
	}
	fmt.Fprintf(tw, "Rows:\t%d in, %d out, %d late, %d malformed\n", j.Metrics.RowsIn, j.Metrics.RowsOut, j.Metrics.LateRows, j.Metrics.Malformed)
	if m := j.Metrics; m.ConsumerLag != nil {
		fmt.Fprintf(tw, "Consumer lag:\t%d records\n", *m.ConsumerLag)
	}
	if m := j.Metrics; m.LastCheckpoint != nil {
		took := ""
		if m.LastCheckpointDuration != nil {
			took = fmt.Sprintf(" (took %s)", time.Duration(*m.LastCheckpointDuration*float64(time.Second)).Round(time.Millisecond))
		}
		fmt.Fprintf(tw, "Last checkpoint:\t%s%s\n", formatTime(m.LastCheckpoint), took)
	}
	tw.Flush()
	if len(j.Operators) > 0 {
		fmt.Fprintln(w, "\nOperators:")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  NAME\tTABLE\tTASKS\tIN\tOUT\tWATERMARK LAG\tBACKPRESSURE\tSTATE\tCONSUMER LAG")
		for _, o := range j.Operators {
			lag, consumer, state := "-", "-", "-"
			if o.WatermarkLag != nil {
				lag = time.Duration(*o.WatermarkLag * float64(time.Second)).Round(time.Millisecond).String()
			}
			if o.ConsumerLag != nil {
				consumer = fmt.Sprint(*o.ConsumerLag)
			}
			if o.StateKeys > 0 || o.StateBytes > 0 {
				state = fmt.Sprintf("%d keys, %d B", o.StateKeys, o.StateBytes)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%d\t%d\t%s\t%.0f%%\t%s\t%s\n", o.Name, o.Table, o.Tasks, o.RowsIn, o.RowsOut, lag, o.Backpressure*100, state, consumer)
		}
		tw.Flush()
	}
	if len(j.Errors) > 0 {
		fmt.Fprintln(w, "\nErrors:")
		for _, e := range j.Errors {
			fmt.Fprintf(w, "  %s  %s\n", e.Time.Format(time.RFC3339), e.Message)
		}
	}
	fmt.Fprintf(w, "\nSQL:\n%s", ensureNewline(j.SQL))
	if j.Plan != "" {
		fmt.Fprintf(w, "\nPlan:\n%s", ensureNewline(j.Plan))
	}
}

func versionsTable(w io.Writer, v any) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "VERSION\tCREATED\tSQL")
	for _, ver := range v.(versionList).Versions {
		first := strings.TrimSpace(ver.SQL)
		if i := strings.IndexByte(first, '\n'); i >= 0 {
			first = first[:i] + " ..."
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\n", ver.Version, ver.CreatedAt.Format(time.RFC3339), first)
	}
	tw.Flush()
}

func updateTable(w io.Writer, v any) {
	u := v.(*client.Update)
	switch {
	case u.Applied:
		fmt.Fprintf(w, "version %d is running: %s\n", u.Version, u.Verdict)
	default:
		fmt.Fprintf(w, "version %d not applied: %s\n", u.Version, u.Verdict)
	}
	if len(u.Changes) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STATE OF\tCHANGE\tWHY")
	for _, c := range u.Changes {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Operator, c.Change, c.Reason)
	}
	tw.Flush()
}

func formatTime(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

func formatLabels(ls map[string]string) string {
	keys := make([]string, 0, len(ls))
	for k := range ls {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + ls[k]
	}
	return strings.Join(parts, ",")
}

func ensureNewline(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		return s + "\n"
	}
	return s
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
