package metrics

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weirdata/weir/clock"
)

// Kind is the kind of a metric.
type Kind uint8

// The kinds of metric.
const (
	KindCounter Kind = iota
	KindGauge
	KindHistogram
	KindMeter
)

// String returns the kind's name: counter, gauge, histogram or meter.
func (k Kind) String() string {
	switch k {
	case KindCounter:
		return "counter"
	case KindGauge:
		return "gauge"
	case KindHistogram:
		return "histogram"
	case KindMeter:
		return "meter"
	}
	return "unknown"
}

// MarshalText returns the kind's name, for JSON.
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText reads a name MarshalText wrote.
func (k *Kind) UnmarshalText(b []byte) error {
	for _, c := range []Kind{KindCounter, KindGauge, KindHistogram, KindMeter} {
		if string(b) == c.String() {
			*k = c
			return nil
		}
	}
	return fmt.Errorf("metrics: unknown kind %q", b)
}

// Group is Flink's MetricGroup: named metrics and named sub-groups under a
// scope. Its methods are safe for concurrent use, but Publish, which
// belongs to the goroutine that updates the metrics.
type Group struct {
	clock clock.Clock
	scope []string
	live  *atomic.Bool // the root's: whether the tree has a metric to publish

	mu      sync.Mutex
	metrics []metric
	names   map[string]int // index into metrics
	groups  []*Group
	byName  map[string]*Group
}

// metric is one registered metric; the field of its kind is set.
type metric struct {
	name     string
	kind     Kind
	counter  *Counter
	gauge    func() float64
	gaugeInt func() int64
	hist     *Histogram
	meter    *Meter
}

// NewGroup returns a root group scoped scope (the runtime's:
// <operator>, <subtask>), whose meters read c (nil: clock.System).
func NewGroup(c clock.Clock, scope ...string) *Group {
	if c == nil {
		c = clock.System{}
	}
	return &Group{clock: c, scope: append([]string(nil), scope...), live: new(atomic.Bool)}
}

// Scope returns the group's scope: its ancestors' names and its own.
func (g *Group) Scope() []string { return append([]string(nil), g.scope...) }

// AddGroup returns the sub-group name, made on the first call (Flink's
// addGroup).
func (g *Group) AddGroup(name string) *Group {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s, ok := g.byName[name]; ok {
		return s
	}
	s := &Group{clock: g.clock, scope: append(g.Scope(), name), live: g.live}
	if g.byName == nil {
		g.byName = map[string]*Group{}
	}
	g.byName[name] = s
	g.groups = append(g.groups, s)
	return s
}

// register registers m unless its name is taken; it returns the metric
// registered under the name and whether it is m's kind.
func (g *Group) register(m metric) (metric, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if i, ok := g.names[m.name]; ok {
		return g.metrics[i], g.metrics[i].kind == m.kind
	}
	if g.names == nil {
		g.names = map[string]int{}
	}
	g.names[m.name] = len(g.metrics)
	g.metrics = append(g.metrics, m)
	if m.kind != KindGauge {
		g.live.Store(true)
	}
	return m, true
}

// Counter returns the counter name (Flink's counter).
func (g *Group) Counter(name string) *Counter {
	c := &Counter{}
	if r, ok := g.register(metric{name: name, kind: KindCounter, counter: c}); ok {
		return r.counter
	}
	return c
}

// Gauge registers fn as the gauge name (Flink's gauge): fn is called each
// time the metrics are read, on the reader's goroutine, so it must be safe
// for concurrent use and must not block. A name already registered keeps
// its first function.
func (g *Group) Gauge(name string, fn func() float64) {
	if fn != nil {
		g.register(metric{name: name, kind: KindGauge, gauge: fn})
	}
}

// GaugeInt is Gauge for an integer: its Sample holds its value exactly
// (Sample.Count) besides as a float (Sample.Value).
func (g *Group) GaugeInt(name string, fn func() int64) {
	if fn != nil {
		g.register(metric{name: name, kind: KindGauge, gaugeInt: fn})
	}
}

// Histogram returns the histogram name over a reservoir of the last size
// values (Flink's histogram of a DescriptiveStatisticsHistogram of
// windowSize size); size <= 0 means DefaultReservoir.
func (g *Group) Histogram(name string, size int) *Histogram {
	h := NewHistogram(size)
	if r, ok := g.register(metric{name: name, kind: KindHistogram, hist: h}); ok {
		return r.hist
	}
	return h
}

// Meter returns the meter name, whose rate is the events per second over
// at least span (Flink's meter of a MeterView of span); span <= 0 means
// DefaultSpan. It reads the group's clock.
func (g *Group) Meter(name string, span time.Duration) *Meter {
	m := NewMeter(g.clock, span)
	if r, ok := g.register(metric{name: name, kind: KindMeter, meter: m}); ok {
		return r.meter
	}
	return m
}

// Sample is one metric as it was read: its scope and name, its kind and
// its values.
type Sample struct {
	// Scope is the scope of the metric's group: for the runtime's groups
	// the operator's name, the subtask's index, then the sub-groups.
	Scope []string `json:"scope"`
	Name  string   `json:"name"`
	Kind  Kind     `json:"kind"`
	// Count is a counter's count, a meter's events, a histogram's values
	// updated (all of them, not only the reservoir's), and an integer
	// gauge's value.
	Count int64 `json:"count"`
	// Value is a gauge's value and a meter's rate per second.
	Value float64 `json:"value"`
	// Histogram is a histogram's statistics over its reservoir; nil for
	// the other kinds.
	Histogram *HistogramStatistics `json:"histogram,omitempty"`
}

// Identifier returns the metric's identifier: its scope and its name
// joined by dots (Flink's metric identifier).
func (s Sample) Identifier() string {
	return strings.Join(append(append([]string(nil), s.Scope...), s.Name), ".")
}

// String returns the sample on one line: its identifier, its kind and its
// values ("op.0.records counter 12", "op.0.queue gauge 3.5", "op.0.rate
// meter 120 events 2/s", "op.0.latency histogram 40 values min=1 p50=4
// p95=9 p99=9.9 max=10 mean=4.6").
func (s Sample) String() string {
	b := []byte(s.Identifier())
	b = append(b, ' ')
	b = append(b, s.Kind.String()...)
	b = append(b, ' ')
	num := func(v float64) { b = strconv.AppendFloat(b, v, 'g', 6, 64) }
	switch s.Kind {
	case KindCounter:
		b = strconv.AppendInt(b, s.Count, 10)
	case KindGauge:
		num(s.Value)
	case KindMeter:
		b = strconv.AppendInt(b, s.Count, 10)
		b = append(b, " events "...)
		num(s.Value)
		b = append(b, "/s"...)
	case KindHistogram:
		b = strconv.AppendInt(b, s.Count, 10)
		b = append(b, " values"...)
		if h := s.Histogram; h != nil && h.Size > 0 {
			b = append(b, " min="...)
			b = strconv.AppendInt(b, h.Min, 10)
			for _, q := range []float64{0.5, 0.95, 0.99} {
				b = append(b, " p"...)
				b = strconv.AppendFloat(b, q*100, 'g', -1, 64)
				b = append(b, '=')
				num(h.Quantile(q))
			}
			b = append(b, " max="...)
			b = strconv.AppendInt(b, h.Max, 10)
			b = append(b, " mean="...)
			num(h.Mean)
		}
	}
	return string(b)
}

// Publish makes the counts of the group's counters and meters and the
// values of its histograms, and its sub-groups', visible to Samples as
// they are now. It must be called on the goroutine that updates them: the
// stream runtime publishes a subtask's metrics after each batch, event
// and timer it handled, and once more when the subtask ends. It costs one
// atomic load when the group has no metric to publish.
func (g *Group) Publish() {
	if !g.live.Load() {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, m := range g.metrics {
		switch {
		case m.counter != nil:
			m.counter.publish()
		case m.hist != nil:
			m.hist.publish()
		case m.meter != nil:
			m.meter.publish()
		}
	}
	for _, c := range g.groups {
		c.Publish()
	}
}

// Samples reads every metric of the group and of its sub-groups, as of
// their last Publish (gauges now): the group's own in the order they were
// registered, then each sub-group's in the order they were added. It may
// be called on any goroutine.
func (g *Group) Samples() []Sample {
	var out []Sample
	g.samples(&out)
	return out
}

func (g *Group) samples(out *[]Sample) {
	// the published values are read under the lock Publish holds, so that
	// they are all of one publish; statistics and gauges are computed
	// after it
	first := len(*out)
	raw := map[int][]int64{} // a histogram's values, by sample
	g.mu.Lock()
	for _, m := range g.metrics {
		s := Sample{Scope: g.scope, Name: m.name, Kind: m.kind}
		switch {
		case m.counter != nil:
			s.Count = m.counter.published()
		case m.hist != nil:
			s.Count, raw[len(*out)] = m.hist.published()
		case m.meter != nil:
			s.Count, s.Value = m.meter.published()
		}
		*out = append(*out, s)
	}
	ms := append([]metric(nil), g.metrics...)
	gs := append([]*Group(nil), g.groups...)
	g.mu.Unlock()
	for i, m := range ms {
		s := &(*out)[first+i]
		switch {
		case m.gauge != nil:
			s.Value = m.gauge()
		case m.gaugeInt != nil:
			s.Count = m.gaugeInt()
			s.Value = float64(s.Count)
		case m.hist != nil:
			st := newStatistics(raw[first+i])
			s.Histogram = &st
		}
	}
	for _, c := range gs {
		c.samples(out)
	}
}
