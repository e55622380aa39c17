package flow

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/resource"
	"github.com/weirdata/weir/spill"
)

// Status is where a job is in its life: Created, then Running, then one of
// Finished, Failed and Canceled.
type Status uint32

const (
	// Created is the zero Job's status: not started.
	Created Status = iota
	// Running: the job's subtasks were started and some have not ended.
	Running
	// Finished: every subtask ended without error.
	Finished
	// Failed: a subtask failed; Wait returns its error.
	Failed
	// Canceled: the job was cancelled (Job.Cancel or the end of the context
	// Start was given) before every subtask ended.
	Canceled
)

// String returns the status's name in capitals, as Flink prints job states.
func (s Status) String() string {
	switch s {
	case Created:
		return "CREATED"
	case Running:
		return "RUNNING"
	case Finished:
		return "FINISHED"
	case Failed:
		return "FAILED"
	case Canceled:
		return "CANCELED"
	}
	return fmt.Sprintf("Status(%d)", uint32(s))
}

// Ended reports whether s is a final status (Finished, Failed or Canceled).
func (s Status) Ended() bool { return s == Finished || s == Failed || s == Canceled }

// errNotStarted is Wait's error on a Job that Start did not return.
var errNotStarted = errors.New("flow: job not started")

// Job is a running execution of a graph, as Start returns it. Its methods are
// safe for concurrent use. The zero Job is Created and never runs: Cancel does
// nothing, Metrics returns nil, Wait an error and Done a channel that is never
// closed. A job's goroutines are gone once Done is closed; a streaming job
// (Options.Streaming) may run until it is cancelled.
type Job struct {
	rt        *job
	g         *Graph
	ctx       context.Context // the caller's context
	stop      context.CancelFunc
	canceled  atomic.Bool // Cancel was called
	status    atomic.Uint32
	releasers []func() error
	done      chan struct{}

	mu     sync.Mutex // guards the fields below while the job runs
	live   [][]*TaskMetrics
	starts [][]time.Time // zero until the subtask started
	ended  [][]bool
	res    *Result
	err    error
	// samples Overview measures rates against, oldest first; the first is
	// the job's start with zero counts
	samples []sample
}

// Start validates g, starts its subtasks and returns at once. Errors in the
// graph (see Graph.Vertex, Connect and Options.Streaming) and errors setting
// up the exchanges are returned here, with nothing left running; errors of the
// subtasks are returned by Wait. ctx bounds the job: its end cancels the job
// as Cancel does.
func Start(ctx context.Context, g *Graph, opts Options) (*Job, error) {
	opts = opts.EnsureDefaults()
	if err := errors.Join(g.errs...); err != nil {
		return nil, err
	}
	for _, e := range g.edges {
		if err := e.check(); err != nil {
			return nil, err
		}
	}
	if opts.Streaming {
		if err := checkStreaming(g); err != nil {
			return nil, err
		}
	}
	if r := opts.Remote; r != nil && (r.Here == nil || r.Transport == nil) {
		return nil, errors.New("flow: Options.Remote needs Here and Transport")
	}
	env := resource.Env{Memory: opts.Manager, FS: opts.FS, Spill: opts.Spill}
	jb := &Job{g: g, ctx: ctx, done: make(chan struct{})}
	if env.Memory == nil {
		m, err := memory.NewManager(memory.Options{SegmentSize: opts.SegmentSize, Budget: opts.Memory})
		if err != nil {
			return nil, fmt.Errorf("flow: %w", err)
		}
		env.Memory = m
		jb.releasers = append(jb.releasers, m.Close)
	}
	if env.FS == nil {
		fs, err := spill.NewDiskFS(opts.TmpDir)
		if err != nil {
			_ = jb.release(nil)
			return nil, fmt.Errorf("flow: %w", err)
		}
		env.FS = fs
		jb.releasers = append(jb.releasers, fs.Close)
	}
	cctx, stop := context.WithCancel(ctx)
	jctx, cancel := context.WithCancelCause(cctx)
	jb.stop = stop
	jb.rt = &job{ctx: jctx, cancel: cancel, opts: opts, env: env}
	for _, e := range g.edges {
		if err := e.start(jb.rt); err != nil {
			cancel(nil)
			stop()
			_ = jb.release(nil)
			return nil, err
		}
	}
	jb.launch()
	return jb, nil
}

// launch starts every subtask and the goroutine that ends the job.
func (jb *Job) launch() {
	j, g := jb.rt, jb.g
	res := &Result{Vertices: make([]VertexMetrics, len(g.vertices))}
	for _, e := range g.edges {
		res.Edges = append(res.Edges, e.ran())
	}
	jb.res = res
	jb.samples = []sample{{at: j.opts.Clock.Now()}}
	jb.live = make([][]*TaskMetrics, len(g.vertices))
	jb.ended = make([][]bool, len(g.vertices))
	jb.starts = make([][]time.Time, len(g.vertices))
	done := make([]atomic.Int32, len(g.vertices))
	for vi, v := range g.vertices {
		res.Vertices[vi] = VertexMetrics{Name: v.name, Subtasks: make([]SubtaskMetrics, v.parallelism)}
		jb.live[vi] = make([]*TaskMetrics, v.parallelism)
		jb.ended[vi] = make([]bool, v.parallelism)
		jb.starts[vi] = make([]time.Time, v.parallelism)
		for i := range jb.live[vi] {
			jb.live[vi][i] = &TaskMetrics{}
			jb.ended[vi][i] = !j.here(v, i) // another process runs it
		}
	}
	stopProgress := j.startProgress(g, jb.live, done)
	jb.status.Store(uint32(Running))
	var wg sync.WaitGroup
	for vi, v := range g.vertices {
		for i := 0; i < v.parallelism; i++ {
			if !j.here(v, i) {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				start := time.Now()
				jb.mu.Lock()
				jb.starts[vi][i] = start
				jb.mu.Unlock()
				m := j.runTask(v, i, jb.live[vi][i], start)
				jb.mu.Lock()
				res.Vertices[vi].Subtasks[i] = m
				jb.ended[vi][i] = true
				jb.mu.Unlock()
				done[vi].Add(1)
			}()
		}
	}
	for _, e := range g.edges {
		e.runRemote()
	}
	go func() {
		wg.Wait()
		j.bg.Wait()
		stopProgress()
		jb.end()
	}()
}

// end runs once every subtask ended: it releases what the job held, decides
// its status and closes Done.
func (jb *Job) end() {
	j := jb.rt
	// a cancellation that came before every subtask ended cancels the job
	// even when its subtasks returned nil
	early := jb.canceled.Load() || jb.ctx.Err() != nil
	err := j.err
	j.cancel(nil)
	jb.stop()
	err = jb.release(err)
	ctxErr := jb.ctx.Err()
	if ctxErr == nil && jb.canceled.Load() {
		ctxErr = context.Canceled
	}
	status := Finished
	switch {
	case err == nil && early,
		err != nil && ctxErr != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
		err = fmt.Errorf("flow: job canceled: %w", ctxErr)
		status = Canceled
	case err != nil:
		status = Failed
	}
	jb.mu.Lock()
	jb.res.PeakMemory = j.env.Memory.Peak()
	jb.err = err
	jb.mu.Unlock()
	jb.status.Store(uint32(status))
	close(jb.done)
}

// release cleans up the edges' runtime state and closes the memory manager
// and spill FS the job created, returning err or the first cleanup error.
func (jb *Job) release(err error) error {
	for _, e := range jb.g.edges {
		if cerr := e.cleanup(); cerr != nil && err == nil {
			err = cerr
		}
	}
	for _, f := range jb.releasers {
		if cerr := f(); cerr != nil && err == nil {
			err = fmt.Errorf("flow: %w", cerr)
		}
	}
	return err
}

// Status returns the job's status now.
func (jb *Job) Status() Status { return Status(jb.status.Load()) }

// Done returns a channel that is closed when the job ended: every goroutine
// it started ended and everything it held was released.
func (jb *Job) Done() <-chan struct{} { return jb.done }

// Cancel cancels the job: every subtask's context (TaskContext.Context) ends,
// and exchanges blocked on it return. It returns at once; Wait returns once
// the subtasks ended, with `flow: job canceled: context canceled` unless the
// job had already ended or a subtask failed with an error of its own. Calling
// it again, or after the end, does nothing.
func (jb *Job) Cancel() {
	if jb.stop == nil || jb.Status().Ended() {
		return
	}
	jb.canceled.Store(true)
	jb.stop()
}

// Wait waits for the job to end and returns its metrics and error, as Execute
// does. It may be called any number of times, from any goroutine.
func (jb *Job) Wait() (*Result, error) {
	if jb.done == nil {
		return nil, errNotStarted
	}
	<-jb.done
	return jb.res, jb.err
}

// Metrics returns a snapshot of every vertex's subtask metrics, in the order
// vertices were added: the final metrics of the subtasks that ended, and for
// the running ones what they have done so far, with Wall the time since the
// subtask started (zero before). Once the job ended it returns the Result's
// vertices.
func (jb *Job) Metrics() []VertexMetrics {
	jb.mu.Lock()
	defer jb.mu.Unlock()
	if jb.res == nil {
		return nil
	}
	now := time.Now()
	out := make([]VertexMetrics, len(jb.res.Vertices))
	for vi, v := range jb.res.Vertices {
		subs := make([]SubtaskMetrics, len(v.Subtasks))
		for i := range subs {
			if jb.ended[vi][i] {
				subs[i] = v.Subtasks[i]
			} else {
				var wall time.Duration
				if st := jb.starts[vi][i]; !st.IsZero() {
					wall = now.Sub(st)
				}
				subs[i] = jb.live[vi][i].snapshot(i, wall)
			}
		}
		out[vi] = VertexMetrics{Name: v.Name, Subtasks: subs}
	}
	return out
}
