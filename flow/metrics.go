package flow

import (
	"sync/atomic"
	"time"
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
}

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
func (m *TaskMetrics) addIdle(since time.Time) { m.idle.Add(int64(time.Since(since))) }

// addBackpressured adds the time since since to the time spent waiting for
// credit to send.
func (m *TaskMetrics) addBackpressured(since time.Time) {
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
}

// VertexMetrics is what one vertex's subtasks did.
type VertexMetrics struct {
	Name     string
	Subtasks []SubtaskMetrics
}

// Total returns the sums over the subtasks (Wall: the maximum; Busy, Idle,
// Backpressured and PeakMemory: the sum).
func (v VertexMetrics) Total() SubtaskMetrics {
	t := SubtaskMetrics{Subtask: -1}
	for _, s := range v.Subtasks {
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

func (m *TaskMetrics) snapshot(subtask int, wall time.Duration) SubtaskMetrics {
	idle, bp := time.Duration(m.idle.Load()), time.Duration(m.backpressured.Load())
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
	}
}
