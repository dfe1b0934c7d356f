// Package client talks to a Sluice server (`sluice serve`) over its REST
// API: it publishes, lists, changes and stops jobs. The `sluice job`
// commands are built on it; applications may use it too.
package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
)

// Client is a connection to one server. Its zero value is not usable:
// set Server.
type Client struct {
	// Server is the server's base URL, e.g. http://127.0.0.1:8081.
	Server string
	// Token is sent as a bearer token when set.
	Token string
	// HTTP is the client used (http.DefaultClient when nil).
	HTTP *http.Client
}

// Job is a job as the server describes it.
type Job struct {
	Name      string            `json:"name"`
	Labels    map[string]string `json:"labels,omitempty"`
	Status    string            `json:"status"`
	Version   int               `json:"version"`
	SQL       string            `json:"sql,omitempty"`
	CreatedAt *time.Time        `json:"created_at,omitempty"`
	UpdatedAt *time.Time        `json:"updated_at,omitempty"`
	StartedAt *time.Time        `json:"started_at,omitempty"`
	StoppedAt *time.Time        `json:"stopped_at,omitempty"`
	Plan      string            `json:"plan,omitempty"`
	Metrics   JobMetrics        `json:"metrics"`
	// Operators are the operators of the job's plan with their metrics
	// (shown by Job, not by Jobs).
	Operators []Operator `json:"operators,omitempty"`
	Errors    []JobError `json:"errors,omitempty"`
}

// JobMetrics are a job's counters and health.
type JobMetrics struct {
	RowsIn      int64 `json:"rows_in"`
	RowsOut     int64 `json:"rows_out"`
	LateRows    int64 `json:"late_rows"`
	Malformed   int64 `json:"malformed"`
	Checkpoints int64 `json:"checkpoints"`
	// LastCheckpoint is when the last checkpoint committed, and
	// LastCheckpointDuration how long it took, in seconds.
	LastCheckpoint         *time.Time `json:"last_checkpoint,omitempty"`
	LastCheckpointDuration *float64   `json:"last_checkpoint_duration_seconds,omitempty"`
	// StateKeys and StateBytes are the state in memory of the operators
	// whose state grows with their keys.
	StateKeys  int64 `json:"state_keys"`
	StateBytes int64 `json:"state_bytes"`
	// ConsumerLag is the sum of the sources' consumer lags (nil: no
	// source knows its own); WatermarkLag (seconds) and Backpressure
	// are the largest of the operators'.
	ConsumerLag  *int64   `json:"consumer_lag,omitempty"`
	WatermarkLag *float64 `json:"watermark_lag_seconds,omitempty"`
	Backpressure float64  `json:"backpressure"`
}

// Operator is an operator of a job's plan with its metrics, summed over
// its tasks (see the server's documentation, "Job health").
type Operator struct {
	Name         string     `json:"name"`
	Kind         string     `json:"kind"`
	Table        string     `json:"table,omitempty"`
	Tasks        int        `json:"tasks"`
	RowsIn       int64      `json:"rows_in"`
	RowsOut      int64      `json:"rows_out"`
	Watermark    *time.Time `json:"watermark,omitempty"`
	WatermarkLag *float64   `json:"watermark_lag_seconds,omitempty"`
	Backpressure float64    `json:"backpressure"`
	StateKeys    int64      `json:"state_keys"`
	StateBytes   int64      `json:"state_bytes"`
	ConsumerLag  *int64     `json:"consumer_lag,omitempty"`
}

// JobError is an error a job met, with its time.
type JobError struct {
	Time    time.Time `json:"time"`
	Message string    `json:"message"`
}

// Version is a version of a job's SQL.
type Version struct {
	Version   int       `json:"version"`
	CreatedAt time.Time `json:"created_at"`
	SQL       string    `json:"sql"`
}

// Update is the outcome of an update or a rollback: the version made (or
// that would be, on a dry run), whether it was applied, and what happens
// to each part of the job's state.
type Update struct {
	Version int    `json:"version"`
	Applied bool   `json:"applied"`
	Verdict string `json:"verdict"`
	// Changes lists, per source, stateful operator and sink, whether its
	// state carries over.
	Changes []StateChange `json:"changes"`
	Job     *Job          `json:"job,omitempty"`
}

// StateChange is what an update does to the state of one operator.
type StateChange struct {
	Operator string `json:"operator"`
	Change   string `json:"change"` // "kept", "new" or "dropped"
	Reason   string `json:"reason,omitempty"`
}

// Error is an error the server answered with.
type Error struct {
	Status  int    `json:"-"`
	Code    string `json:"code"`
	Message string `json:"message"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	// Update holds the report of an update refused because it would
	// drop state.
	Update *Update `json:"update,omitempty"`
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%d:%d: %s", e.Line, e.Column, e.Message)
	}
	return e.Message
}

// do sends a request with body (JSON, if not nil) and decodes the answer
// into out (if not nil).
func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	resp, err := c.send(ctx, method, path, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return readError(resp)
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("cannot read the server's answer: %w", err)
	}
	if out == nil || resp.StatusCode == http.StatusNoContent {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("cannot decode the server's answer: %w", err)
	}
	return nil
}

// send sends a request with body (JSON, if not nil) and returns the
// answer, whatever its status.
func (c *Client) send(ctx context.Context, method, path string, body any) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.Server, "/")+path, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("cannot reach the server: %w", err)
	}
	return resp, nil
}

// readError reads the error an answer of status 3xx or more holds.
func readError(resp *http.Response) error {
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("cannot read the server's answer: %w", err)
	}
	var e struct {
		Error *Error `json:"error"`
	}
	if json.Unmarshal(data, &e) != nil || e.Error == nil {
		return &Error{Status: resp.StatusCode, Code: "http", Message: fmt.Sprintf("%s: %s", resp.Status, bytes.TrimSpace(data))}
	}
	e.Error.Status = resp.StatusCode
	return e.Error
}

func jobPath(name string, rest ...string) string {
	return "/v1/jobs/" + url.PathEscape(name) + strings.Join(rest, "")
}

// Jobs lists the jobs, those with every label of labels when not empty.
func (c *Client) Jobs(ctx context.Context, labels map[string]string) ([]Job, error) {
	q := url.Values{}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		q.Add("label", k+"="+labels[k])
	}
	path := "/v1/jobs"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var out struct {
		Jobs []Job `json:"jobs"`
	}
	return out.Jobs, c.do(ctx, http.MethodGet, path, nil, &out)
}

// Submit publishes a new job and starts it.
func (c *Client) Submit(ctx context.Context, name, sql string, labels map[string]string) (*Job, error) {
	var j Job
	body := map[string]any{"name": name, "sql": sql}
	if len(labels) > 0 {
		body["labels"] = labels
	}
	return &j, c.do(ctx, http.MethodPost, "/v1/jobs", body, &j)
}

// Job returns a job, with its plan.
func (c *Client) Job(ctx context.Context, name string) (*Job, error) {
	var j Job
	return &j, c.do(ctx, http.MethodGet, jobPath(name), nil, &j)
}

// Stop stops a job: with a final checkpoint, or at once (now).
func (c *Client) Stop(ctx context.Context, name string, now bool) (*Job, error) {
	mode := "checkpoint"
	if now {
		mode = "now"
	}
	var j Job
	return &j, c.do(ctx, http.MethodPost, jobPath(name, "/stop"), map[string]string{"mode": mode}, &j)
}

// Resume runs a stopped job again from its state.
func (c *Client) Resume(ctx context.Context, name string) (*Job, error) {
	var j Job
	return &j, c.do(ctx, http.MethodPost, jobPath(name, "/resume"), struct{}{}, &j)
}

// Delete stops a job and deletes it, its versions and its state.
func (c *Client) Delete(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodDelete, jobPath(name), nil, nil)
}

// Versions lists a job's kept versions.
func (c *Client) Versions(ctx context.Context, name string) ([]Version, error) {
	var out struct {
		Versions []Version `json:"versions"`
	}
	return out.Versions, c.do(ctx, http.MethodGet, jobPath(name, "/versions"), nil, &out)
}

// UpdateOptions say how an update or a rollback goes.
type UpdateOptions struct {
	// DryRun only reports what the update would do to the state.
	DryRun bool
	// AllowStateLoss applies an update that drops state.
	AllowStateLoss bool
}

// Update changes a job's SQL: a new version, which replaces the running
// one when its state carries over (or the loss is allowed). An update
// refused for the state it would drop is an *Error of code "conflict"
// whose Update holds the report.
func (c *Client) Update(ctx context.Context, name, sql string, o UpdateOptions) (*Update, error) {
	var u Update
	body := map[string]any{"sql": sql, "dry_run": o.DryRun, "allow_state_loss": o.AllowStateLoss}
	return &u, c.do(ctx, http.MethodPut, jobPath(name), body, &u)
}

// Rollback makes a kept version the running one again, as an update to
// its SQL.
func (c *Client) Rollback(ctx context.Context, name string, version int, o UpdateOptions) (*Update, error) {
	var u Update
	body := map[string]any{"version": version, "dry_run": o.DryRun, "allow_state_loss": o.AllowStateLoss}
	return &u, c.do(ctx, http.MethodPost, jobPath(name, "/rollback"), body, &u)
}

// Validate parses and plans a script without running it.
func (c *Client) Validate(ctx context.Context, sql string) error {
	return c.do(ctx, http.MethodPost, "/v1/validate", map[string]string{"sql": sql}, nil)
}

// Explain returns the plan of a script's job.
func (c *Client) Explain(ctx context.Context, sql string) (string, error) {
	var out struct {
		Plan string `json:"plan"`
	}
	return out.Plan, c.do(ctx, http.MethodPost, "/v1/explain", map[string]string{"sql": sql}, &out)
}

// Column is a column of a preview's result.
type Column struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// PreviewEnd is how a preview ended: after Rows rows, for Reason:
// "max_rows", "timeout" or "finished" (the query's inputs ended).
type PreviewEnd struct {
	Rows   int    `json:"rows"`
	Reason string `json:"reason"`
}

// PreviewError is the error a preview's query failed with while it ran.
type PreviewError struct {
	Message string `json:"message"`
}

func (e *PreviewError) Error() string { return e.Message }

// Preview runs a script of DDL, SET and one SELECT on the server for at
// most maxRows rows and timeout (zero: the server's defaults, 100 rows
// and 10 s), and hands its columns, then each row as it comes (its kind,
// "+I", "-U", "+U" or "-D", and its values as JSON decodes them, with
// numbers as json.Number), to the functions. An error in the SQL is an
// *Error with its position; a failure while the query runs, a
// *PreviewError. Cancelling ctx ends the preview (the server cancels the
// query).
func (c *Client) Preview(ctx context.Context, sql string, maxRows int, timeout time.Duration,
	onColumns func([]Column), onRow func(kind string, values []any)) (PreviewEnd, error) {
	body := map[string]any{"sql": sql}
	if maxRows > 0 {
		body["max_rows"] = maxRows
	}
	if timeout > 0 {
		body["timeout_ms"] = max(timeout.Milliseconds(), 1)
	}
	resp, err := c.send(ctx, http.MethodPost, "/v1/preview", body)
	if err != nil {
		return PreviewEnd{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return PreviewEnd{}, readError(resp)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), maxEvent)
	var event string
	var data []byte
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case len(line) == 0:
			if event == "" && data == nil {
				continue
			}
			end, done, err := previewEvent(event, data, onColumns, onRow)
			if done || err != nil {
				return end, err
			}
			event, data = "", nil
		case bytes.HasPrefix(line, []byte("event:")):
			event = string(bytes.TrimSpace(line[len("event:"):]))
		case bytes.HasPrefix(line, []byte("data:")):
			if data != nil {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(line[len("data:"):], []byte(" "))...)
		}
	}
	if err := sc.Err(); err != nil {
		return PreviewEnd{}, fmt.Errorf("cannot read the preview: %w", err)
	}
	return PreviewEnd{}, errors.New("the preview's stream ended without an end event")
}

// maxEvent bounds an event of a preview's stream (a row).
const maxEvent = 64 << 20

// previewEvent handles one event of a preview's stream; done is set by
// the last.
func previewEvent(event string, data []byte, onColumns func([]Column), onRow func(string, []any)) (end PreviewEnd, done bool, err error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	switch event {
	case "columns":
		var v struct {
			Columns []Column `json:"columns"`
		}
		if err := dec.Decode(&v); err != nil {
			return end, true, fmt.Errorf("cannot decode the preview's columns: %w", err)
		}
		if onColumns != nil {
			onColumns(v.Columns)
		}
	case "row":
		var v struct {
			Kind   string `json:"kind"`
			Values []any  `json:"values"`
		}
		if err := dec.Decode(&v); err != nil {
			return end, true, fmt.Errorf("cannot decode a row of the preview: %w", err)
		}
		if onRow != nil {
			onRow(v.Kind, v.Values)
		}
	case "end":
		if err := dec.Decode(&end); err != nil {
			return end, true, fmt.Errorf("cannot decode the preview's end: %w", err)
		}
		return end, true, nil
	case "error":
		var e PreviewError
		if err := dec.Decode(&e); err != nil {
			return end, true, fmt.Errorf("cannot decode the preview's error: %w", err)
		}
		return end, true, &e
	}
	return end, false, nil
}
