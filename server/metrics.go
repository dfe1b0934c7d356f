package server

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// The jobs' metrics, labelled by job. Counters are those of the job's
// current (or last) run: they start from zero when it runs again, which
// Prometheus reads as a counter reset.
var (
	descRowsIn = prometheus.NewDesc("sluice_job_rows_in_total",
		"Rows read from the job's sources.", []string{"job"}, nil)
	descRowsOut = prometheus.NewDesc("sluice_job_rows_out_total",
		"Rows written to the job's sinks.", []string{"job"}, nil)
	descLate = prometheus.NewDesc("sluice_job_late_rows_total",
		"Rows dropped by the job's window operators as late.", []string{"job"}, nil)
	descMalformed = prometheus.NewDesc("sluice_job_malformed_records_total",
		"Malformed records the job's sources skipped.", []string{"job"}, nil)
	descCheckpoints = prometheus.NewDesc("sluice_job_checkpoints_total",
		"Checkpoints the job committed.", []string{"job"}, nil)
	descLastCheckpoint = prometheus.NewDesc("sluice_job_last_checkpoint_timestamp_seconds",
		"When the job's last checkpoint committed (Unix time).", []string{"job"}, nil)
	descStatus = prometheus.NewDesc("sluice_job_status",
		"1 for the job's status, 0 for the others.", []string{"job", "status"}, nil)
)

var statuses = []string{statusRunning, statusStopped, statusFailed, statusFinished}

// collector collects the jobs' metrics at each scrape.
type collector struct{ s *Server }

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRowsIn, descRowsOut, descLate, descMalformed, descCheckpoints, descLastCheckpoint, descStatus, descAlertFiring} {
		ch <- d
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	c.s.mu.Lock()
	views := make([]jobJSON, 0, len(c.s.jobs))
	for _, j := range c.s.jobs {
		views = append(views, c.s.view(j, false))
	}
	c.s.mu.Unlock()
	c.s.alerts.collect(ch)
	counter := func(d *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	for _, v := range views {
		counter(descRowsIn, v.Metrics.RowsIn, v.Name)
		counter(descRowsOut, v.Metrics.RowsOut, v.Name)
		counter(descLate, v.Metrics.LateRows, v.Name)
		counter(descMalformed, v.Metrics.Malformed, v.Name)
		counter(descCheckpoints, v.Metrics.Checkpoints, v.Name)
		if !v.Metrics.LastCheckpoint.IsZero() {
			ch <- prometheus.MustNewConstMetric(descLastCheckpoint, prometheus.GaugeValue,
				float64(v.Metrics.LastCheckpoint.UnixMicro())/1e6, v.Name)
		}
		for _, st := range statuses {
			val := 0.0
			if st == v.Status {
				val = 1
			}
			ch <- prometheus.MustNewConstMetric(descStatus, prometheus.GaugeValue, val, v.Name, st)
		}
	}
}

// metricsHandler serves the jobs' metrics and the process's, in the
// Prometheus text format, from a registry of the server's own.
func (s *Server) metricsHandler() http.HandlerFunc {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collector{s}, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP
}
