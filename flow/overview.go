package flow

import (
	"time"

	"github.com/weirdata/weir/memory"
)

// MetricsWindow is the span Job.Overview measures rates and shares of time
// over: Flink's metric views update every 5 seconds
// (View.UPDATE_INTERVAL_SECONDS) and its MeterView averages over 60 by
// default; weir keeps the shorter span so that a terminal shows changes
// within seconds.
const MetricsWindow = 5 * time.Second

// sampleEvery is the least time between two samples a Job keeps.
const sampleEvery = time.Second

// Overview is a job's metrics at one instant, per vertex and per operator,
// as Flink's web UI shows them: records in and out with their rates, the
// low watermark and its lag, and the shares of time busy, idle and
// backpressured.
type Overview struct {
	// At is when it was taken, on the job's clock (Options.Clock).
	At time.Time
	// Window is the span the rates and shares are measured over: from the
	// newest sample at least MetricsWindow old (else the oldest, at first
	// the job's start) to At. Overview calls take the samples, at most one
	// a second.
	Window   time.Duration
	Vertices []VertexOverview
	// Memory is the job's managed memory (Flink's
	// Status.Flink.Memory.Managed): its budget in bytes (0: unbounded),
	// what its operators hold now and the most they held.
	Memory MemoryOverview
}

// MemoryOverview is a job's managed memory at an Overview.
type MemoryOverview struct {
	Budget, Used, Peak int64
}

// VertexOverview is one vertex (a task: a chain of operators) of a
// Overview.
type VertexOverview struct {
	Name        string
	Parallelism int
	Ended       int // subtasks that ended
	// Watermark is the lowest current input watermark over the subtasks
	// (Flink's low watermark; for a source, the lowest it emitted), or
	// noWatermark while any has none.
	Watermark int64
	// WatermarkLag is At minus Watermark: how far event time is behind the
	// job's clock. Zero without a watermark and at maxWatermark.
	WatermarkLag time.Duration
	// Busy, Idle and Backpressured are the shares of time (0 to 1) the
	// running subtasks spent working, waiting for input and waiting for
	// credit to send over the Window, averaged over the subtasks: Flink's
	// busyTimeMsPerSecond, idleTimeMsPerSecond and
	// backPressuredTimeMsPerSecond divided by 1000. All zero once every
	// subtask ended before the Window.
	Busy, Idle, Backpressured float64
	// Operators are the vertex's chained operators, head first, summed over
	// the subtasks; a vertex whose body registered none has one, named as
	// the vertex, with the task's records.
	Operators []OperatorOverview
	// Subtasks are the subtasks' totals, with each one's watermark.
	Subtasks []SubtaskMetrics
}

// OperatorOverview is one operator of a VertexOverview.
type OperatorOverview struct {
	Name       string
	RecordsIn  int64
	RecordsOut int64
	// RecordsInPerSecond and RecordsOutPerSecond are the rates over the
	// Window (Flink's numRecordsInPerSecond and numRecordsOutPerSecond).
	RecordsInPerSecond, RecordsOutPerSecond float64
}

// sample is what Overview measures rates against: per vertex, each
// operator's totals and the sums of the subtasks' times.
type sample struct {
	at       time.Time
	vertices []vertexSample
}

type vertexSample struct {
	in, out        []int64 // per operator
	wall, idle, bp time.Duration
}

// Overview returns the job's metrics now. The zero Job returns the zero
// Overview.
func (jb *Job) Overview() Overview {
	vs := jb.Metrics()
	if vs == nil {
		return Overview{}
	}
	now := jb.rt.opts.Clock.Now()
	cur := sample{at: now, vertices: make([]vertexSample, len(vs))}
	snap := Overview{At: now, Vertices: make([]VertexOverview, len(vs))}
	if m := jb.rt.env.Memory; m != nil {
		b := m.Budget()
		if b == memory.Unlimited {
			b = 0
		}
		snap.Memory = MemoryOverview{Budget: b, Used: m.Used(), Peak: m.Peak()}
	}
	jb.mu.Lock()
	for vi, v := range vs {
		tot := v.Total()
		ops := make([]OperatorOverview, len(tot.Operators))
		for i, o := range tot.Operators {
			ops[i] = OperatorOverview{Name: o.Name, RecordsIn: o.RecordsIn, RecordsOut: o.RecordsOut}
		}
		if len(ops) == 0 {
			ops = []OperatorOverview{{Name: v.Name, RecordsIn: tot.RecordsIn, RecordsOut: tot.RecordsOut}}
		}
		vsm := vertexSample{in: make([]int64, len(ops)), out: make([]int64, len(ops))}
		for i, o := range ops {
			vsm.in[i], vsm.out[i] = o.RecordsIn, o.RecordsOut
		}
		for _, s := range v.Subtasks {
			vsm.wall += s.Wall
			vsm.idle += s.Idle
			vsm.bp += s.Backpressured
		}
		cur.vertices[vi] = vsm
		ended := 0
		for _, e := range jb.ended[vi] {
			if e {
				ended++
			}
		}
		snap.Vertices[vi] = VertexOverview{
			Name: v.Name, Parallelism: len(v.Subtasks), Ended: ended,
			Watermark: tot.Watermark, WatermarkLag: watermarkLag(now, tot.Watermark),
			Operators: ops, Subtasks: v.Subtasks,
		}
	}
	base := jb.baseSample(now)
	snap.Window = now.Sub(base.at)
	for vi := range snap.Vertices {
		rates(&snap.Vertices[vi], cur.vertices[vi], base.vertex(vi), snap.Window)
	}
	if last := jb.samples[len(jb.samples)-1]; now.Sub(last.at) >= sampleEvery {
		jb.samples = append(jb.samples, cur)
	}
	jb.mu.Unlock()
	return snap
}

// baseSample drops the samples before the newest one at least
// MetricsWindow old and returns the oldest left. Called with jb.mu held.
func (jb *Job) baseSample(now time.Time) sample {
	drop := 0
	for drop < len(jb.samples)-1 && now.Sub(jb.samples[drop+1].at) >= MetricsWindow {
		drop++
	}
	jb.samples = jb.samples[drop:]
	return jb.samples[0]
}

// vertex returns the sample's vertex vi, zero when it has none (the job's
// start).
func (s sample) vertex(vi int) vertexSample {
	if vi < len(s.vertices) {
		return s.vertices[vi]
	}
	return vertexSample{}
}

// rates sets v's rates and shares from the samples cur and base, window
// apart.
func rates(v *VertexOverview, cur, base vertexSample, window time.Duration) {
	if window > 0 {
		secs := window.Seconds()
		for i := range v.Operators {
			var in, out int64
			if i < len(base.in) {
				in, out = base.in[i], base.out[i]
			}
			v.Operators[i].RecordsInPerSecond = float64(cur.in[i]-in) / secs
			v.Operators[i].RecordsOutPerSecond = float64(cur.out[i]-out) / secs
		}
	}
	wall := cur.wall - base.wall
	if wall <= 0 {
		return
	}
	idle, bp := max(cur.idle-base.idle, 0), max(cur.bp-base.bp, 0)
	busy := max(wall-idle-bp, 0)
	v.Busy = float64(busy) / float64(wall)
	v.Idle = min(float64(idle)/float64(wall), 1)
	v.Backpressured = min(float64(bp)/float64(wall), 1)
}

// watermarkLag is now minus wm, zero for noWatermark and maxWatermark.
func watermarkLag(now time.Time, wm int64) time.Duration {
	if wm == noWatermark || wm == maxWatermark {
		return 0
	}
	return now.Sub(time.UnixMilli(wm))
}
