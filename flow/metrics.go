package flow

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weirdata/weir/metrics"
)

// noWatermark is a subtask's watermark before it saw any (Flink's
// Long.MIN_VALUE, the stream API's watermark.Min); maxWatermark is the
// watermark that ends a bounded input (watermark.Max).
const (
	noWatermark  int64 = math.MinInt64
	maxWatermark int64 = math.MaxInt64
)

// TaskMetrics counts one subtask's work while it runs. The runtime counts
// records and bytes per batch, never per record; bytes are estimated as the
// records' size in Go memory (unsafe.Sizeof of the record type), since
// pipelined edges do not serialize. A body may add what its own operators
// spilled and the memory they peaked at. Safe for concurrent use.
type TaskMetrics struct {
	recordsIn, recordsOut atomic.Int64
	bytesIn, bytesOut     atomic.Int64
	spilled               atomic.Int64
	peak                  atomic.Int64
	idle                  atomic.Int64 // nanoseconds waiting for input
	backpressured         atomic.Int64 // nanoseconds waiting for credit to send
	// the Unix nanosecond a wait for input or credit began, zero when not
	// waiting: a snapshot counts a wait still under way
	idleSince, bpSince atomic.Int64
	watermark          atomic.Int64
	hasWatermark       atomic.Bool
	outWatermark       atomic.Int64
	hasOutWatermark    atomic.Bool

	opMu sync.Mutex
	ops  []*OperatorCounters
}

// OperatorCounters counts the records of one operator of a subtask's chain,
// as Flink counts numRecordsIn and numRecordsOut per chained operator: the
// body registers one per operator (TaskMetrics.Operator) when it builds its
// chain and adds to it once per batch. Safe for concurrent use.
type OperatorCounters struct {
	name    string
	in, out atomic.Int64
	user    atomic.Pointer[metrics.Group]
}

// SetMetrics sets the operator's user metric group (Flink's operator
// metric group), which the job's metrics read (Job.Metrics, Result).
func (c *OperatorCounters) SetMetrics(g *metrics.Group) { c.user.Store(g) }

// Metrics returns the operator's user metric group, nil when none was set.
func (c *OperatorCounters) Metrics() *metrics.Group { return c.user.Load() }

// AddIn adds n records the operator received.
func (c *OperatorCounters) AddIn(n int) { c.in.Add(int64(n)) }

// AddOut adds n records the operator emitted, over all its outputs.
func (c *OperatorCounters) AddOut(n int) { c.out.Add(int64(n)) }

// RecordsIn returns the records the operator received so far.
func (c *OperatorCounters) RecordsIn() int64 { return c.in.Load() }

// RecordsOut returns the records the operator emitted so far.
func (c *OperatorCounters) RecordsOut() int64 { return c.out.Load() }

// Operator registers the next operator of the subtask's chain, in chain
// order (head first), and returns its counters.
func (m *TaskMetrics) Operator(name string) *OperatorCounters {
	c := &OperatorCounters{name: name}
	m.opMu.Lock()
	m.ops = append(m.ops, c)
	m.opMu.Unlock()
	return c
}

// SetWatermark records the subtask's current watermark: the input
// watermark of a task with inputs, the last one emitted by a source.
func (m *TaskMetrics) SetWatermark(wm int64) {
	m.watermark.Store(wm)
	m.hasWatermark.Store(true)
}

// SetOutputWatermark records the watermark the subtask last sent to its
// outputs (Flink's currentOutputWatermark).
func (m *TaskMetrics) SetOutputWatermark(wm int64) {
	m.outWatermark.Store(wm)
	m.hasOutWatermark.Store(true)
}

// beginIdle and beginBackpressured mark the start of a wait, which the
// matching add ends.
func (m *TaskMetrics) beginIdle(since time.Time)          { m.idleSince.Store(since.UnixNano()) }
func (m *TaskMetrics) beginBackpressured(since time.Time) { m.bpSince.Store(since.UnixNano()) }

// AddSpilled adds n bytes the body's operators spilled.
func (m *TaskMetrics) AddSpilled(n int64) { m.spilled.Add(n) }

// ObservePeakMemory raises the subtask's peak memory to n if n is higher.
func (m *TaskMetrics) ObservePeakMemory(n int64) {
	for {
		p := m.peak.Load()
		if n <= p || m.peak.CompareAndSwap(p, n) {
			return
		}
	}
}

// RecordsIn returns the records read so far, for bodies and tests.
func (m *TaskMetrics) RecordsIn() int64 { return m.recordsIn.Load() }

// RecordsOut returns the records sent downstream so far (emitted records still
// pending in a writer's batch are not counted yet).
func (m *TaskMetrics) RecordsOut() int64 { return m.recordsOut.Load() }

// AddIdle adds d to the time spent waiting for input: for a body that waits
// on Gate.Ready in a select of its own.
func (m *TaskMetrics) AddIdle(d time.Duration) { m.idle.Add(int64(d)) }

// addIdle adds the time since since to the time spent waiting for input.
func (m *TaskMetrics) addIdle(since time.Time) {
	m.idleSince.Store(0)
	m.idle.Add(int64(time.Since(since)))
}

// addBackpressured adds the time since since to the time spent waiting for
// credit to send.
func (m *TaskMetrics) addBackpressured(since time.Time) {
	m.bpSince.Store(0)
	m.backpressured.Add(int64(time.Since(since)))
}

// SubtaskMetrics is what one subtask did.
type SubtaskMetrics struct {
	Subtask    int
	RecordsIn  int64
	RecordsOut int64
	BytesIn    int64 // estimated: records times the record type's size
	BytesOut   int64
	Wall       time.Duration // from start to end of the subtask
	Busy       time.Duration // Wall minus Idle and Backpressured
	// Idle is the time spent waiting for input (Flink's idleTimeMsPerSecond,
	// as a total): a Reader or Gate with nothing to read.
	Idle time.Duration
	// Backpressured is the time spent waiting for credit to send (Flink's
	// backPressuredTimeMsPerSecond, as a total): a Writer whose channel to a
	// consumer was full.
	Backpressured time.Duration
	Spilled       int64 // record bytes written to spill files by its exchanges and operators
	PeakMemory    int64 // most bytes one of its blocking outputs held in memory, or its body reported (ObservePeakMemory)
	// Watermark is the subtask's current input watermark (Flink's
	// currentInputWatermark), for a source the last watermark it emitted;
	// noWatermark before any (TaskMetrics.SetWatermark).
	Watermark int64
	// OutWatermark is the watermark the subtask last sent to its outputs
	// (Flink's currentOutputWatermark), noWatermark before any
	// (TaskMetrics.SetOutputWatermark).
	OutWatermark int64
	// Operators are the operators of the subtask's chain, head first, as
	// its body registered them (TaskMetrics.Operator); empty when it
	// registered none.
	Operators []OperatorMetrics
	// Metrics are the user metrics of those operators (the groups of
	// OperatorCounters.SetMetrics), in chain order, each scoped
	// <operator>.<subtask>; nil when there are none. Total leaves them
	// out: they are per subtask.
	Metrics []metrics.Sample
}

// OperatorMetrics is what one operator of a chain did.
type OperatorMetrics struct {
	Name       string
	RecordsIn  int64 // records it received (zero for a source)
	RecordsOut int64 // records it emitted over all its outputs (zero for a sink)
}

// VertexMetrics is what one vertex's subtasks did.
type VertexMetrics struct {
	Name     string
	Subtasks []SubtaskMetrics
}

// Total returns the sums over the subtasks (Wall: the maximum; Busy, Idle,
// Backpressured and PeakMemory: the sum; Watermark: the minimum, Flink's
// low watermark; Operators: each operator's sums).
func (v VertexMetrics) Total() SubtaskMetrics {
	t := SubtaskMetrics{Subtask: -1, Watermark: maxWatermark, OutWatermark: maxWatermark}
	if len(v.Subtasks) == 0 {
		t.Watermark, t.OutWatermark = noWatermark, noWatermark
	}
	for _, s := range v.Subtasks {
		t.Watermark = min(t.Watermark, s.Watermark)
		t.OutWatermark = min(t.OutWatermark, s.OutWatermark)
		for i, o := range s.Operators {
			if i == len(t.Operators) {
				t.Operators = append(t.Operators, OperatorMetrics{Name: o.Name})
			}
			t.Operators[i].RecordsIn += o.RecordsIn
			t.Operators[i].RecordsOut += o.RecordsOut
		}
		t.RecordsIn += s.RecordsIn
		t.RecordsOut += s.RecordsOut
		t.BytesIn += s.BytesIn
		t.BytesOut += s.BytesOut
		t.Wall = max(t.Wall, s.Wall)
		t.Busy += s.Busy
		t.Idle += s.Idle
		t.Backpressured += s.Backpressured
		t.Spilled += s.Spilled
		t.PeakMemory += s.PeakMemory
	}
	return t
}

// Result is what Execute returns: metrics per vertex in the order vertices were
// added, the edges as they ran, in the order they were connected, and the
// memory manager's peak.
type Result struct {
	Vertices   []VertexMetrics
	Edges      []EdgeInfo
	PeakMemory int64
}

// EdgeInfo is an edge as it ran: its producer and consumer (indexes into
// Result.Vertices), which input of the consumer it is, its ship strategy and
// its exchange mode.
type EdgeInfo struct {
	From, To, Input int
	Strategy        ShipStrategy
	Mode            ExchangeMode
}

// SpilledBytes returns the bytes all subtasks of all vertices wrote to spill
// files.
func (r *Result) SpilledBytes() int64 {
	var n int64
	for _, v := range r.Vertices {
		n += v.Total().Spilled
	}
	return n
}

// Vertex returns the metrics of the vertex named name, and whether there is one.
func (r *Result) Vertex(name string) (VertexMetrics, bool) {
	for _, v := range r.Vertices {
		if v.Name == name {
			return v, true
		}
	}
	return VertexMetrics{}, false
}

// snapshot returns the metrics of a subtask that ran for wall; a wait under
// way counts up to now.
func (m *TaskMetrics) snapshot(subtask int, wall time.Duration) SubtaskMetrics {
	idle, bp := time.Duration(m.idle.Load()), time.Duration(m.backpressured.Load())
	now := time.Now().UnixNano()
	if s := m.idleSince.Load(); s != 0 && now > s {
		idle += time.Duration(now - s)
	}
	if s := m.bpSince.Load(); s != 0 && now > s {
		bp += time.Duration(now - s)
	}
	wm, out := noWatermark, noWatermark
	if m.hasWatermark.Load() {
		wm = m.watermark.Load()
	}
	if m.hasOutWatermark.Load() {
		out = m.outWatermark.Load()
	}
	m.opMu.Lock()
	counters := slices.Clone(m.ops)
	m.opMu.Unlock()
	var ops []OperatorMetrics
	var user []metrics.Sample
	if len(counters) > 0 {
		ops = make([]OperatorMetrics, len(counters))
		for i, c := range counters {
			ops[i] = OperatorMetrics{Name: c.name, RecordsIn: c.in.Load(), RecordsOut: c.out.Load()}
			if g := c.user.Load(); g != nil {
				user = append(user, g.Samples()...) // user gauges run here, outside the lock
			}
		}
	}
	busy := wall - idle - bp
	if busy < 0 {
		busy = 0
	}
	return SubtaskMetrics{
		Subtask:       subtask,
		RecordsIn:     m.recordsIn.Load(),
		RecordsOut:    m.recordsOut.Load(),
		BytesIn:       m.bytesIn.Load(),
		BytesOut:      m.bytesOut.Load(),
		Wall:          wall,
		Busy:          busy,
		Idle:          idle,
		Backpressured: bp,
		Spilled:       m.spilled.Load(),
		PeakMemory:    m.peak.Load(),
		Watermark:     wm,
		OutWatermark:  out,
		Operators:     ops,
		Metrics:       user,
	}
}
