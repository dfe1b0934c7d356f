package server

import (
	"net/http"
	"time"

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
	descSuppressed = prometheus.NewDesc("sluice_job_suppressed_alerts_total",
		"Alerts of the job's rulesets suppressed by their SUPPRESS BY.", []string{"job"}, nil)
	descMalformed = prometheus.NewDesc("sluice_job_malformed_records_total",
		"Malformed records the job's sources skipped.", []string{"job"}, nil)
	descReconnects = prometheus.NewDesc("sluice_job_reconnects_total",
		"Connections of the job's sources and sinks to their systems (an MQTT broker) made again after a loss.", []string{"job"}, nil)
	descSinkDropped = prometheus.NewDesc("sluice_job_sink_dropped_messages_total",
		"Messages the job's sinks dropped by their tables' policy (a full store-and-forward buffer with 'drop-oldest').", []string{"job"}, nil)
	descCheckpoints = prometheus.NewDesc("sluice_job_checkpoints_total",
		"Checkpoints the job committed.", []string{"job"}, nil)
	descLastCheckpoint = prometheus.NewDesc("sluice_job_last_checkpoint_timestamp_seconds",
		"When the job's last checkpoint committed (Unix time).", []string{"job"}, nil)
	descStatus = prometheus.NewDesc("sluice_job_status",
		"1 for the job's status, 0 for the others.", []string{"job", "status"}, nil)
	descCheckpointDuration = prometheus.NewDesc("sluice_job_last_checkpoint_duration_seconds",
		"How long the job's last checkpoint took, from the request of its barriers to its commit.", []string{"job"}, nil)

	// Per operator of a job's plan, labelled by job and operator (its
	// name in the job, as GET /v1/jobs/{name} lists it).
	opLabels      = []string{"job", "operator"}
	descOpRowsIn  = prometheus.NewDesc("sluice_operator_rows_in_total", "Rows the operator took (a source: read).", opLabels, nil)
	descOpRowsOut = prometheus.NewDesc("sluice_operator_rows_out_total", "Rows the operator passed on (a sink: wrote).", opLabels, nil)
	descOpWMLag   = prometheus.NewDesc("sluice_operator_watermark_lag_seconds",
		"The wall clock minus the operator's event-time watermark (the lowest of its tasks').", opLabels, nil)
	descOpBackpressure = prometheus.NewDesc("sluice_operator_backpressure_ratio",
		"The largest share of the last 5 s any of the operator's tasks spent blocked sending into a full inbox downstream.", opLabels, nil)
	descOpStateKeys  = prometheus.NewDesc("sluice_operator_state_keys", "Keys the operator's state holds in memory.", opLabels, nil)
	descOpStateBytes = prometheus.NewDesc("sluice_operator_state_bytes", "Estimated bytes of the operator's state in memory.", opLabels, nil)
	descConsumerLag  = prometheus.NewDesc("sluice_source_consumer_lag_records",
		"Records of the source's partitions not read yet (the log end offsets minus the next offsets to read).", []string{"job", "operator", "table"}, nil)

	// The metric store's sizes.
	descStoreKeys = prometheus.NewDesc("sluice_metric_store_keys",
		"Keys of the metric groups held, in memory or in the spill directory.", []string{"where"}, nil)
	descStoreBytes = prometheus.NewDesc("sluice_metric_store_memory_bytes",
		"Estimated bytes of the metric values held in memory (what --metric-store-memory bounds).", nil, nil)
	descStoreLogBytes = prometheus.NewDesc("sluice_metric_store_change_log_bytes",
		"Estimated bytes of the metric groups' change logs.", nil, nil)
	descStoreSubscribers = prometheus.NewDesc("sluice_metric_store_subscribers",
		"Open subscriptions to the metric groups' changes.", nil, nil)
)

var statuses = []string{statusRunning, statusStopped, statusFailed, statusFinished}

// collector collects the jobs' metrics at each scrape.
type collector struct{ s *Server }

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRowsIn, descRowsOut, descLate, descSuppressed, descMalformed, descReconnects, descSinkDropped, descCheckpoints, descLastCheckpoint, descStatus,
		descCheckpointDuration, descOpRowsIn, descOpRowsOut, descOpWMLag, descOpBackpressure, descOpStateKeys, descOpStateBytes,
		descConsumerLag, descAlertFiring, descStoreKeys, descStoreBytes, descStoreLogBytes, descStoreSubscribers} {
		ch <- d
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	c.s.mu.Lock()
	views := make([]jobJSON, 0, len(c.s.jobs))
	for _, j := range c.s.jobs {
		views = append(views, c.s.view(j, true))
	}
	c.s.mu.Unlock()
	now := time.Now()
	for i := range views {
		views[i].withMetrics(now)
	}
	c.s.alerts.collect(ch)
	counter := func(d *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	if c.s.metrics != nil {
		st := c.s.metrics.Stats()
		gauge(descStoreKeys, float64(st.HotKeys), "memory")
		gauge(descStoreKeys, float64(st.SpilledKeys), "spill")
		gauge(descStoreBytes, float64(st.HotBytes))
		gauge(descStoreLogBytes, float64(st.LogBytes))
		gauge(descStoreSubscribers, float64(st.Subscribers))
	}
	for _, v := range views {
		if d := v.Metrics.LastCheckpointDurationSecs; d != nil {
			gauge(descCheckpointDuration, *d, v.Name)
		}
		for _, o := range v.Operators {
			counter(descOpRowsIn, o.RowsIn, v.Name, o.Name)
			counter(descOpRowsOut, o.RowsOut, v.Name, o.Name)
			if o.WatermarkLagSecs != nil {
				gauge(descOpWMLag, *o.WatermarkLagSecs, v.Name, o.Name)
			}
			gauge(descOpBackpressure, o.Backpressure, v.Name, o.Name)
			if o.hasState {
				gauge(descOpStateKeys, float64(o.StateKeys), v.Name, o.Name)
				gauge(descOpStateBytes, float64(o.StateBytes), v.Name, o.Name)
			}
			if o.ConsumerLag != nil {
				gauge(descConsumerLag, float64(*o.ConsumerLag), v.Name, o.Name, o.Table)
			}
		}
		counter(descRowsIn, v.Metrics.RowsIn, v.Name)
		counter(descRowsOut, v.Metrics.RowsOut, v.Name)
		counter(descLate, v.Metrics.LateRows, v.Name)
		counter(descSuppressed, v.Metrics.SuppressedAlerts, v.Name)
		counter(descMalformed, v.Metrics.Malformed, v.Name)
		counter(descReconnects, v.Metrics.Reconnects, v.Name)
		counter(descSinkDropped, v.Metrics.SinkDropped, v.Name)
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
