package flow

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weirdata/weir/clock"
	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/resource"
	"github.com/weirdata/weir/spill"
)

// ErrPanic is wrapped by the error of a task whose body panicked.
var ErrPanic = errors.New("flow: panic")

// Default option values.
const (
	DefaultBatchSize      = 1024
	DefaultChannelBuffers = 2
	DefaultBuffers        = DefaultChannelBuffers
	DefaultBufferTimeout  = 100 * time.Millisecond
)

// Options configures one execution. The zero value is usable.
type Options struct {
	// Memory is the managed memory budget in bytes; zero means unlimited. It is
	// ignored when Manager is set.
	Memory int64
	// SegmentSize is the memory manager's segment size (zero: the default). It
	// is ignored when Manager is set.
	SegmentSize int
	// TmpDir is where the spill directory is created ("" is os.TempDir()). It is
	// ignored when FS is set.
	TmpDir string
	// BatchSize is the number of records per batch; zero means DefaultBatchSize.
	BatchSize int
	// ChannelBuffers is the capacity in batches (and events) of each channel
	// of a pipelined edge, one channel per (producer subtask, consumer
	// subtask) pair: a producer sends only against this credit, so a full
	// channel blocks its producer alone. Zero means Buffers when that is
	// set, else DefaultChannelBuffers.
	ChannelBuffers int
	// Buffers is ChannelBuffers under another name: it applies when
	// ChannelBuffers is zero, and EnsureDefaults sets it to ChannelBuffers.
	Buffers int
	// BufferTimeout is how long a partial batch may wait in a pipelined writer;
	// zero means DefaultBufferTimeout, negative means batches go only when full
	// (or before an event, or at the end).
	BufferTimeout time.Duration
	// Manager, when set, is the job's memory manager; the caller closes it.
	Manager *memory.Manager
	// FS, when set, is the job's spill file system; the caller closes it.
	FS spill.FS
	// Spill configures spill files.
	Spill spill.Options
	// Progress, when set, is called every ProgressEvery while the job runs (from
	// a goroutine of its own, never after Execute returned) with what every
	// vertex has done so far: how a command shows a long job's progress.
	Progress func(Progress)
	// ProgressEvery is how often Progress is called; zero means one second.
	ProgressEvery time.Duration
	// Streaming marks an unbounded job (a DataStream job): its bodies may run
	// until the job is cancelled, so Start refuses the edges that wait for
	// their producers to end: Blocking edges and Range edges without Bounds.
	Streaming bool
	// Clock is the processing-time clock the tasks read (TaskContext.Clock);
	// nil means clock.System.
	Clock clock.Clock
	// Remote, when set, runs only this process's share of the subtasks
	// and carries the channels to the others' over its Transport.
	Remote *Remote
}

// Progress is a running job's state, as Options.Progress receives it.
type Progress struct {
	Elapsed  time.Duration
	Vertices []VertexProgress
}

// VertexProgress is what one vertex's subtasks have done so far.
type VertexProgress struct {
	Name                  string
	Subtasks, Done        int   // subtasks, and how many of them ended
	RecordsIn, RecordsOut int64 // records read from inputs and sent to outputs
}

// EnsureDefaults fills zero fields with their defaults and returns o.
func (o Options) EnsureDefaults() Options {
	if o.BatchSize <= 0 {
		o.BatchSize = DefaultBatchSize
	}
	if o.ChannelBuffers <= 0 {
		o.ChannelBuffers = o.Buffers
		if o.ChannelBuffers <= 0 {
			o.ChannelBuffers = DefaultChannelBuffers
		}
	}
	o.Buffers = o.ChannelBuffers
	if o.BufferTimeout == 0 {
		o.BufferTimeout = DefaultBufferTimeout
	}
	if o.Clock == nil {
		o.Clock = clock.System{}
	}
	return o
}

// TaskContext is what a subtask's body gets: who it is, its inputs and outputs
// (through Input and Output), the job's memory manager and spill FS, and its
// metrics. It belongs to the subtask's goroutine.
type TaskContext struct {
	Vertex      string
	Subtask     int // 0-based
	Parallelism int
	Env         resource.Env
	Metrics     *TaskMetrics

	ctx     context.Context
	clock   clock.Clock
	inputs  []input
	outputs []output
	life    lifecycle
	gate    *Gate
}

// Context returns the job's context: it is cancelled when any subtask fails or
// the caller's context ends. Bodies pass it to Reader.Next and check it in
// long loops of their own.
func (tc *TaskContext) Context() context.Context { return tc.ctx }

// Clock returns the job's processing-time clock (Options.Clock): how a task
// reads the time and waits for a processing-time timer.
func (tc *TaskContext) Clock() clock.Clock {
	if tc.clock == nil {
		return clock.System{}
	}
	return tc.clock
}

// NumInputs returns the number of inputs.
func (tc *TaskContext) NumInputs() int { return len(tc.inputs) }

// NumOutputs returns the number of outputs.
func (tc *TaskContext) NumOutputs() int { return len(tc.outputs) }

// input is a Reader of any record type.
type input interface {
	close()
	// superstep mode, for Iteration.Run
	supersteps() error
	nextSuperstep()
	drainSuperstep(ctx context.Context) error
}

// output is a Writer of any record type.
type output interface {
	finish() error
	abort()
	flushIdle()
	needsFlusher() bool
}

// job is one execution's shared state.
type job struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	opts   Options
	env    resource.Env

	once sync.Once
	err  error
	// bg are the goroutines that carry channels between processes
	bg sync.WaitGroup
}

func (j *job) fail(err error) {
	j.once.Do(func() { j.err = err })
	j.cancel(err)
}

// Execute runs g until every subtask ended and returns the metrics: Start,
// then Wait. The first error of any subtask cancels the others and is
// returned wrapped as `flow: vertex "name" subtask i/n: ...` (i counted from
// 1); a panic in a body becomes such an error wrapping ErrPanic; the end of
// ctx before every subtask ended is returned as `flow: job canceled: context
// canceled`. On every path
// all goroutines have ended, every reservation the exchanges took is released
// and every spill file they wrote is removed when Execute returns. The Result
// holds the metrics so far on error too.
func Execute(ctx context.Context, g *Graph, opts Options) (*Result, error) {
	jb, err := Start(ctx, g, opts)
	if err != nil {
		return nil, err
	}
	return jb.Wait()
}

// startProgress calls Options.Progress every ProgressEvery until the returned
// function is called; it returns once no call is running.
func (j *job) startProgress(g *Graph, live [][]*TaskMetrics, done []atomic.Int32) (stop func()) {
	if j.opts.Progress == nil {
		return func() {}
	}
	every := j.opts.ProgressEvery
	if every <= 0 {
		every = time.Second
	}
	start := time.Now()
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
			}
			p := Progress{Elapsed: time.Since(start), Vertices: make([]VertexProgress, len(g.vertices))}
			for vi, v := range g.vertices {
				vp := VertexProgress{Name: v.name, Subtasks: v.parallelism, Done: int(done[vi].Load())}
				for _, m := range live[vi] {
					vp.RecordsIn += m.RecordsIn()
					vp.RecordsOut += m.RecordsOut()
				}
				p.Vertices[vi] = vp
			}
			j.opts.Progress(p)
		}
	}()
	return func() {
		close(quit)
		wg.Wait()
	}
}

// runTask runs one subtask, which started at start: the body, then closing its inputs (so producers
// stop waiting on it) and finishing or aborting its outputs.
func (j *job) runTask(v *Vertex, i int, m *TaskMetrics, start time.Time) SubtaskMetrics {
	tc := &TaskContext{
		Vertex: v.name, Subtask: i, Parallelism: v.parallelism,
		Env: j.env, Metrics: m, ctx: j.ctx, clock: j.opts.Clock,
	}
	for _, e := range v.inputs {
		tc.inputs = append(tc.inputs, e.reader(tc))
	}
	flusher := false
	for _, e := range v.outputs {
		w := e.writer(tc)
		flusher = flusher || w.needsFlusher()
		tc.outputs = append(tc.outputs, w)
	}
	var stop chan struct{}
	var fwg sync.WaitGroup
	if flusher {
		stop = make(chan struct{})
		fwg.Add(1)
		go runFlusher(tc.outputs, j.opts.BufferTimeout/2, stop, &fwg)
	}
	err := callBody(v.body, tc)
	if err != nil {
		j.fail(taskError(v, i, err))
	}
	if flusher {
		close(stop)
		fwg.Wait()
	}
	for _, in := range tc.inputs {
		in.close()
	}
	for _, out := range tc.outputs {
		if err == nil {
			if err = out.finish(); err != nil {
				j.fail(taskError(v, i, err))
			}
		}
		if err != nil {
			out.abort()
		}
	}
	return tc.Metrics.snapshot(i, time.Since(start))
}

func taskError(v *Vertex, i int, err error) error {
	return fmt.Errorf("flow: vertex %q subtask %d/%d: %w", v.name, i+1, v.parallelism, err)
}

// callBody runs body, then what the task's operators registered to run when
// it ends (TaskContext.OnExit, OnEnd, Keep), turning a panic into an error
// with the panic value and the top of the stack.
func callBody(body func(*TaskContext) error, tc *TaskContext) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v\n%s", ErrPanic, r, shortStack(debug.Stack(), 16))
		}
	}()
	defer tc.endTask()
	return body(tc)
}

// shortStack keeps n lines of a stack trace from the frame that panicked on
// (the lines after the runtime's panic frame).
func shortStack(s []byte, n int) []byte {
	lines := bytes.Split(bytes.TrimRight(s, "\n"), []byte("\n"))
	from := 0
	for k, l := range lines {
		if bytes.HasPrefix(l, []byte("panic(")) {
			from = k + 2
			break
		}
	}
	if from >= len(lines) {
		from = 0
	}
	lines = lines[from:]
	if len(lines) > n {
		lines = lines[:n]
	}
	return bytes.Join(lines, []byte("\n"))
}

// runFlusher ticks every half BufferTimeout, sending the partial batches that
// waited a whole tick.
func runFlusher(outs []output, every time.Duration, stop chan struct{}, wg *sync.WaitGroup) {
	defer wg.Done()
	if every <= 0 {
		every = time.Millisecond
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			for _, o := range outs {
				if o.needsFlusher() {
					o.flushIdle()
				}
			}
		}
	}
}
