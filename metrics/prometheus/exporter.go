package prometheus

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/weirdata/weir/metrics"
	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/watermark"
)

// Job is what an Exporter reads of a running job at each scrape;
// *stream.Job is one.
type Job interface {
	ID() string
	Status() stream.Status
	Overview() stream.Overview
	Checkpoints() stream.CheckpointHistory
}

// Scope prefixes of Flink's metric names.
const (
	jobScope      = "flink_jobmanager_job_"
	taskScope     = "flink_taskmanager_job_task_"
	operatorScope = "flink_taskmanager_job_task_operator_"
	// memoryScope is Flink's TaskManager managed memory, per job in weir.
	memoryScope = "flink_taskmanager_Status_Flink_Memory_Managed_"
)

// Exporter exposes the metrics of the jobs it holds. The zero Exporter is
// not usable: call New.
type Exporter struct {
	now    func() time.Time
	mu     sync.Mutex
	jobs   map[string]*entry
	list   func() []Listed
	listed map[string]*entry // what list returned at the last scrape
	reg    *prom.Registry
}

// Listed is a job a listing gives (Exporter.List).
type Listed struct {
	Name string
	Job  Job
	// Start is when the job started: its uptime counts from it.
	Start time.Time
}

// entry is a job an Exporter holds, with what its last scrape saw of each
// subtask.
type entry struct {
	name  string
	job   Job
	start time.Time
	last  map[subtaskKey]times
}

type subtaskKey struct {
	vertex  string
	subtask int
}

// times are a subtask's totals at a scrape.
type times struct {
	wall, busy, idle, backpressured time.Duration
	in, out                         int64
}

// New returns an Exporter without jobs, reading time with now (time.Now
// when nil).
func New(now func() time.Time) *Exporter {
	if now == nil {
		now = time.Now
	}
	e := &Exporter{now: now, jobs: map[string]*entry{}, reg: prom.NewRegistry()}
	e.reg.MustRegister(e)
	return e
}

// Add exposes job j under name from now on; the job's uptime counts from
// now.
func (e *Exporter) Add(name string, j Job) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.jobs[j.ID()] = &entry{name: name, job: j, start: e.now(), last: map[subtaskKey]times{}}
}

// List makes every scrape expose the jobs list returns then too: a job
// it no longer returns is no longer exposed. A job both Add gave and list
// returns is exposed as Add gave it.
func (e *Exporter) List(list func() []Listed) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.list = list
}

// Remove stops exposing the job with id id.
func (e *Exporter) Remove(id string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.jobs, id)
}

// Handler serves the metrics in Prometheus' text format (GET /metrics).
func (e *Exporter) Handler() http.Handler {
	return promhttp.HandlerFor(e.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// Describe describes nothing: the Exporter is an unchecked collector,
// since the jobs' vertices and user metrics are known only at a scrape.
func (e *Exporter) Describe(chan<- *prom.Desc) {}

// Collect reads every job and sends its metrics.
func (e *Exporter) Collect(ch chan<- prom.Metric) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	c := collector{ch: ch}
	for id, en := range e.jobs {
		en.collect(&c, id, now)
	}
	if e.list == nil {
		return
	}
	listed := map[string]*entry{}
	for _, l := range e.list() {
		id := l.Job.ID()
		if _, ok := e.jobs[id]; ok {
			continue
		}
		en := e.listed[id]
		if en == nil {
			en = &entry{last: map[subtaskKey]times{}}
		}
		en.name, en.job, en.start = l.Name, l.Job, l.Start
		listed[id] = en
		en.collect(&c, id, now)
	}
	e.listed = listed
}

// collector sends metrics, remembering the descriptions it made.
type collector struct {
	ch    chan<- prom.Metric
	descs map[string]*prom.Desc
}

func (c *collector) desc(name string, labels []string) *prom.Desc {
	if c.descs == nil {
		c.descs = map[string]*prom.Desc{}
	}
	d, ok := c.descs[name]
	if !ok {
		d = prom.NewDesc(sanitize(name), "", labels, nil)
		c.descs[name] = d
	}
	return d
}

func (c *collector) send(kind prom.ValueType, name string, v float64, labels, values []string) {
	c.ch <- prom.MustNewConstMetric(c.desc(name, labels), kind, v, values...)
}

var (
	jobLabels      = []string{"job_id", "job_name"}
	taskLabels     = []string{"job_id", "job_name", "task_name", "subtask_index"}
	operatorLabels = []string{"job_id", "job_name", "task_name", "subtask_index", "operator_name"}
)

func (en *entry) collect(c *collector, id string, now time.Time) {
	jl := []string{id, en.name}
	uptime := -1.0 // Flink's uptime of a job that no longer runs
	if en.job.Status() == stream.Running {
		uptime = float64(now.Sub(en.start).Milliseconds())
	}
	h := en.job.Checkpoints()
	c.send(prom.GaugeValue, jobScope+"uptime", uptime, jobLabels, jl)
	c.send(prom.CounterValue, jobScope+"numRestarts", float64(h.Restarts), jobLabels, jl)
	c.send(prom.CounterValue, jobScope+"numberOfCompletedCheckpoints", float64(len(h.Completed)), jobLabels, jl)
	c.send(prom.CounterValue, jobScope+"numberOfFailedCheckpoints", float64(h.Failed), jobLabels, jl)
	if n := len(h.Completed); n > 0 {
		last := h.Completed[n-1]
		c.send(prom.GaugeValue, jobScope+"lastCheckpointDuration", float64(last.Duration.Milliseconds()), jobLabels, jl)
		c.send(prom.GaugeValue, jobScope+"lastCheckpointSize", float64(last.Size), jobLabels, jl)
		c.send(prom.GaugeValue, jobScope+"lastCheckpointFullSize", float64(last.FullSize), jobLabels, jl)
		c.send(prom.GaugeValue, jobScope+"lastCheckpointAlignmentDuration", float64(last.Alignment.Milliseconds()), jobLabels, jl)
	}
	ov := en.job.Overview()
	if ov.Memory.Budget > 0 {
		c.send(prom.GaugeValue, memoryScope+"Total", float64(ov.Memory.Budget), jobLabels, jl)
	}
	if !ov.At.IsZero() {
		c.send(prom.GaugeValue, memoryScope+"Used", float64(ov.Memory.Used), jobLabels, jl)
	}
	for _, v := range ov.Vertices {
		for _, s := range v.Subtasks {
			en.collectSubtask(c, id, v.Name, s, ov.At)
		}
	}
}

func (en *entry) collectSubtask(c *collector, id, vertex string, s stream.SubtaskMetrics, at time.Time) {
	tl := []string{id, en.name, vertex, strconv.Itoa(s.Subtask)}
	c.send(prom.CounterValue, taskScope+"numRecordsIn", float64(s.RecordsIn), taskLabels, tl)
	c.send(prom.CounterValue, taskScope+"numRecordsOut", float64(s.RecordsOut), taskLabels, tl)
	c.send(prom.CounterValue, taskScope+"numBytesIn", float64(s.BytesIn), taskLabels, tl)
	c.send(prom.CounterValue, taskScope+"numBytesOut", float64(s.BytesOut), taskLabels, tl)
	c.send(prom.CounterValue, taskScope+"spilledBytes", float64(s.Spilled), taskLabels, tl)
	c.send(prom.GaugeValue, taskScope+"peakMemoryBytes", float64(s.PeakMemory), taskLabels, tl)
	if wm := s.Watermark; wm != watermark.Min && wm != watermark.Max {
		c.send(prom.GaugeValue, taskScope+"currentInputWatermark", float64(wm), taskLabels, tl)
		c.send(prom.GaugeValue, taskScope+"watermarkLag", float64(at.UnixMilli()-wm), taskLabels, tl)
	}
	if wm := s.OutWatermark; wm != watermark.Min && wm != watermark.Max {
		c.send(prom.GaugeValue, taskScope+"currentOutputWatermark", float64(wm), taskLabels, tl)
	}
	key := subtaskKey{vertex, s.Subtask}
	cur := times{s.Wall, s.Busy, s.Idle, s.Backpressured, s.RecordsIn, s.RecordsOut}
	prev := en.last[key]
	if cur.wall < prev.wall || cur.in < prev.in || cur.out < prev.out {
		prev = times{} // a new attempt: its totals start again
	}
	en.last[key] = cur
	if span := cur.wall - prev.wall; span > 0 {
		perSecond := func(d time.Duration) float64 { return 1000 * float64(d) / float64(span) }
		rate := func(n int64) float64 { return float64(n) / span.Seconds() }
		c.send(prom.GaugeValue, taskScope+"busyTimeMsPerSecond", perSecond(cur.busy-prev.busy), taskLabels, tl)
		c.send(prom.GaugeValue, taskScope+"idleTimeMsPerSecond", perSecond(cur.idle-prev.idle), taskLabels, tl)
		c.send(prom.GaugeValue, taskScope+"backPressuredTimeMsPerSecond", perSecond(cur.backpressured-prev.backpressured), taskLabels, tl)
		c.send(prom.GaugeValue, taskScope+"numRecordsInPerSecond", rate(cur.in-prev.in), taskLabels, tl)
		c.send(prom.GaugeValue, taskScope+"numRecordsOutPerSecond", rate(cur.out-prev.out), taskLabels, tl)
	}
	for _, o := range s.Operators {
		ol := append(tl[:len(tl):len(tl)], o.Name)
		c.send(prom.CounterValue, operatorScope+"numRecordsIn", float64(o.RecordsIn), operatorLabels, ol)
		c.send(prom.CounterValue, operatorScope+"numRecordsOut", float64(o.RecordsOut), operatorLabels, ol)
	}
	for _, m := range s.Metrics {
		en.collectUser(c, tl, m)
	}
}

// collectUser sends a user metric, whose scope is its operator, its
// subtask and its groups.
func (en *entry) collectUser(c *collector, tl []string, m metrics.Sample) {
	if len(m.Scope) < 2 {
		return
	}
	ol := append(tl[:len(tl):len(tl)], m.Scope[0])
	name := operatorScope + strings.Join(append(append([]string(nil), m.Scope[2:]...), m.Name), "_")
	switch m.Kind {
	case metrics.KindCounter:
		c.send(prom.CounterValue, name, float64(m.Count), operatorLabels, ol)
	case metrics.KindGauge:
		c.send(prom.GaugeValue, name, m.Value, operatorLabels, ol)
	case metrics.KindMeter:
		c.send(prom.GaugeValue, name, m.Value, operatorLabels, ol)
		c.send(prom.CounterValue, name+"_count", float64(m.Count), operatorLabels, ol)
	case metrics.KindHistogram:
		q := map[float64]float64{}
		var sum float64
		if h := m.Histogram; h != nil && h.Size > 0 {
			for i, v := range metrics.Quantiles {
				q[v] = h.Quantiles[i]
			}
			sum = h.Mean * float64(h.Size)
		}
		c.ch <- prom.MustNewConstSummary(c.desc(name, operatorLabels), uint64(m.Count), sum, q, ol...)
	}
}

// sanitize replaces the characters a Prometheus metric name may not hold
// with underscores.
func sanitize(name string) string {
	b := []byte(name)
	for i, r := range b {
		ok := r == '_' || r == ':' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || i > 0 && '0' <= r && r <= '9'
		if !ok {
			b[i] = '_'
		}
	}
	return string(b)
}
