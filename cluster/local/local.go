package local

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/weirdata/weir/cluster/rest"
	"github.com/weirdata/weir/cluster/view"
	"github.com/weirdata/weir/stream"
)

// Options configure New.
type Options struct {
	// Slots is the process's task slots: the jobs' parallelism. Below 1 it
	// is 1.
	Slots int
	// Memory is the process's memory budget in bytes (0: none), shown as
	// its TaskManager's managed memory.
	Memory int64
	// SavepointDir is the savepoint directory of a request that names none
	// ("" refuses such requests).
	SavepointDir string
	// Now reads the time; nil is time.Now.
	Now func() time.Time
	// Stopped, when set, is called with a job's id and its savepoint's
	// path once a stop through TriggerSavepoint wrote the savepoint.
	Stopped func(jid, path string)
}

// Cluster is a rest.Cluster over this process's jobs. Create it with New
// and Close it after its jobs ended.
type Cluster struct {
	opts   Options
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	spwg   sync.WaitGroup // the savepoints in progress

	mu       sync.Mutex
	jobs     []*entry
	triggers map[string]*trigger
}

// entry is a job a Cluster holds.
type entry struct {
	name       string
	job        *stream.Job
	plan       *stream.Plan
	start, end int64 // end -1 while it runs
	cancelling bool
	failure    string
	savepoint  *rest.CompletedCheckpoint // the latest savepoint taken through TriggerSavepoint
	inProgress bool                      // a savepoint runs
}

// trigger is an asynchronous savepoint request.
type trigger struct {
	jid string
	sp  rest.Savepoint
}

var _ rest.Cluster = (*Cluster)(nil)

// New returns a Cluster without jobs.
func New(opts Options) *Cluster {
	if opts.Slots < 1 {
		opts.Slots = 1
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Cluster{opts: opts, ctx: ctx, cancel: cancel, triggers: map[string]*trigger{}}
}

// Add serves job j under name from now on, with its plan when not nil.
func (c *Cluster) Add(name string, j *stream.Job, plan *stream.Plan) {
	e := &entry{name: name, job: j, plan: plan, start: c.now(), end: -1}
	c.mu.Lock()
	c.jobs = append(c.jobs, e)
	c.mu.Unlock()
	c.wg.Go(func() {
		select {
		case <-j.Done():
		case <-c.ctx.Done():
			return
		}
		_, err := j.Wait()
		c.mu.Lock()
		defer c.mu.Unlock()
		e.end = c.now()
		if err != nil && j.Status() == stream.Failed {
			e.failure = err.Error()
		}
	})
}

// Close cancels the savepoints in progress and waits for the Cluster's
// goroutines. The jobs are not cancelled.
func (c *Cluster) Close() {
	c.cancel()
	c.wg.Wait()
	c.spwg.Wait()
}

// WaitSavepoints waits until no savepoint is in progress, or ctx ends.
func (c *Cluster) WaitSavepoints(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		c.spwg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		c.cancel()
		<-done
		return fmt.Errorf("local: waiting for savepoints: %w", ctx.Err())
	}
}

func (c *Cluster) now() int64 { return c.opts.Now().UnixMilli() }

// find returns the job with id jid; c.mu is held.
func (c *Cluster) find(jid string) (*entry, error) {
	for _, e := range c.jobs {
		if e.job.ID() == jid {
			return e, nil
		}
	}
	return nil, fmt.Errorf("local: job %s: %w", jid, rest.ErrNotFound)
}

// state is Flink's state of e; c.mu is held.
func (e *entry) state() string {
	switch e.job.Status() {
	case stream.Created:
		return rest.StateCreated
	case stream.Running:
		if e.cancelling {
			return rest.StateCancelling
		}
		return rest.StateRunning
	case stream.Finished:
		return rest.StateFinished
	case stream.Failed:
		return rest.StateFailed
	default:
		return rest.StateCanceled
	}
}

// overview is e's JobOverview at now; c.mu is held.
func (e *entry) overview(now int64) rest.JobOverview {
	o := rest.JobOverview{ID: e.job.ID(), Name: e.name, State: e.state(), Start: e.start, End: e.end, LastModification: e.start}
	if e.end >= 0 {
		o.Duration, o.LastModification = e.end-e.start, e.end
	} else {
		o.Duration = now - e.start
	}
	return o
}

// parallelism is the largest parallelism of e's vertices.
func (e *entry) parallelism() int {
	p := 0
	if e.plan != nil {
		for _, t := range e.plan.Tasks {
			p = max(p, t.Parallelism)
		}
	}
	for _, v := range e.job.Overview().Vertices {
		p = max(p, v.Parallelism)
	}
	return p
}

// Overview answers the process's figures: one TaskManager.
func (c *Cluster) Overview(ctx context.Context) (rest.Overview, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	o := rest.Overview{TaskManagers: 1, SlotsTotal: c.opts.Slots, IsLeader: true, Version: "weir"}
	used := 0
	for _, e := range c.jobs {
		st := e.state()
		o.CountJob(st)
		if !rest.Ended(st) {
			used = max(used, min(e.parallelism(), c.opts.Slots))
		}
	}
	o.SlotsAvailable = c.opts.Slots - used
	return o, nil
}

// Jobs answers the jobs, in the order they were added.
func (c *Cluster) Jobs(ctx context.Context) ([]rest.JobOverview, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	out := make([]rest.JobOverview, 0, len(c.jobs))
	for _, e := range c.jobs {
		out = append(out, e.overview(now))
	}
	return out, nil
}

// vertexID is the id of vertex i of job jid: 32 hex digits.
func vertexID(jid string, i int) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%s/%d", jid, i))
	return hex.EncodeToString(sum[:16])
}

// Job answers job jid with its vertices and plan.
func (c *Cluster) Job(ctx context.Context, jid string) (rest.JobDetails, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, err := c.find(jid)
	if err != nil {
		return rest.JobDetails{}, err
	}
	now := c.now()
	d := rest.JobDetails{JobOverview: e.overview(now), Now: now, Failure: e.failure}
	d.IsStoppable = d.State == rest.StateRunning && e.checkpoints()
	ov := e.job.Overview()
	d.Memory = view.Memory(ov)
	for i, v := range ov.Vertices {
		d.Vertices = append(d.Vertices, e.vertex(jid, i, v, d.JobOverview))
	}
	if d.Vertices == nil && e.plan != nil {
		// Before the first attempt runs, and after a job that never started.
		for i, t := range e.plan.Tasks {
			d.Vertices = append(d.Vertices, rest.Vertex{ID: vertexID(jid, i), Name: t.Name, Parallelism: t.Parallelism,
				Status: vertexState(d.State, false), Start: d.Start, End: d.End, Duration: d.Duration})
		}
	}
	ids := make([]string, len(d.Vertices))
	for i, v := range d.Vertices {
		ids[i] = v.ID
	}
	d.Plan = view.Plan(jid, e.name, e.plan, ids)
	return d, nil
}

// checkpoints says whether e's job checkpoints.
func (e *entry) checkpoints() bool { return e.plan != nil && e.plan.Checkpointing != nil }

// vertexState is the state of a vertex of a job in state job.
func vertexState(job string, finished bool) string {
	switch {
	case finished:
		return rest.StateFinished
	case job == rest.StateCancelling:
		return rest.StateCancelling
	case job == rest.StateFailed, job == rest.StateCanceled, job == rest.StateCreated:
		return job
	case job == rest.StateFinished:
		return rest.StateFinished
	}
	return rest.StateRunning
}

// vertex is vertex i of e's Overview.
func (e *entry) vertex(jid string, i int, v stream.VertexOverview, jo rest.JobOverview) rest.Vertex {
	return rest.Vertex{ID: vertexID(jid, i), Name: v.Name, Parallelism: v.Parallelism,
		Status: vertexState(jo.State, v.Parallelism > 0 && v.Ended == v.Parallelism),
		Start:  jo.Start, End: jo.End, Duration: jo.Duration, Metrics: view.VertexMetrics(v)}
}

// Checkpoints answers job jid's completed checkpoints and the savepoints
// taken through TriggerSavepoint.
func (c *Cluster) Checkpoints(ctx context.Context, jid string) (rest.Checkpoints, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, err := c.find(jid)
	if err != nil {
		return rest.Checkpoints{}, err
	}
	h := e.job.Checkpoints()
	n := len(h.Completed)
	out := rest.Checkpoints{Counts: rest.CheckpointCounts{Restored: len(h.Restores), Total: n + h.Failed, Completed: n, Failed: h.Failed},
		History: view.History(h)}
	if e.inProgress {
		out.Counts.InProgress = 1
		out.Counts.Total++
	}
	if n > 0 {
		l := out.History[0]
		out.Latest.Completed = &rest.CompletedCheckpoint{ID: l.ID, Status: l.Status, TriggerTimestamp: l.TriggerTimestamp,
			LatestAckTimestamp: l.LatestAckTimestamp, ExternalPath: l.ExternalPath}
	}
	if sp := e.savepoint; sp != nil {
		cp := *sp
		out.Latest.Savepoint = &cp
	}
	return out, nil
}

// Exceptions answers job jid's failed attempts (stream.Job.Exceptions),
// newest first.
func (c *Cluster) Exceptions(ctx context.Context, jid string) (rest.Exceptions, error) {
	c.mu.Lock()
	e, err := c.find(jid)
	c.mu.Unlock()
	if err != nil {
		return rest.Exceptions{}, err
	}
	ex, truncated := e.job.Exceptions()
	return view.Exceptions(ex, truncated, ""), nil
}

// Result answers how job jid ended. Its standard output is this
// process's own, so the result holds none.
func (c *Cluster) Result(ctx context.Context, jid string) (rest.JobResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, err := c.find(jid)
	if err != nil {
		return rest.JobResult{}, err
	}
	o := e.overview(c.now())
	return rest.NewJobResult(jid, o.State, o.Duration, e.failure, nil, 0), nil
}

// TaskManagers answers the process.
func (c *Cluster) TaskManagers(ctx context.Context) ([]rest.TaskManager, error) {
	o, err := c.Overview(ctx)
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	return []rest.TaskManager{{ID: fmt.Sprintf("%s:%d", host, os.Getpid()), Path: "embedded",
		SlotsNumber: o.SlotsTotal, FreeSlots: o.SlotsAvailable,
		Hardware: rest.Hardware{CPUCores: runtime.NumCPU(), ManagedMemory: c.opts.Memory}}}, nil
}

// Submit refuses: an embedded process runs its own job.
func (c *Cluster) Submit(ctx context.Context, s rest.Submission) (string, error) {
	return "", fmt.Errorf("local: an embedded process runs its own job: %w", rest.ErrInvalid)
}

// Cancel cancels job jid.
func (c *Cluster) Cancel(ctx context.Context, jid string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, err := c.find(jid)
	if err != nil {
		return err
	}
	if e.job.Status().Ended() {
		return fmt.Errorf("local: job %s is %s: %w", jid, e.state(), rest.ErrConflict)
	}
	e.cancelling = true
	e.job.Cancel()
	return nil
}

// TriggerSavepoint starts a savepoint of job jid into dir (Options.SavepointDir
// when empty), stopping the job with it when stop is set.
func (c *Cluster) TriggerSavepoint(ctx context.Context, jid, dir string, stop bool) (string, error) {
	if dir == "" {
		dir = c.opts.SavepointDir
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, err := c.find(jid)
	if err != nil {
		return "", err
	}
	switch {
	case dir == "":
		return "", fmt.Errorf("local: no savepoint directory: %w", rest.ErrInvalid)
	case e.state() != rest.StateRunning:
		return "", fmt.Errorf("local: job %s is %s: %w", jid, e.state(), rest.ErrConflict)
	case !e.checkpoints():
		return "", fmt.Errorf("local: job %s does not checkpoint: %w", jid, rest.ErrConflict)
	case e.inProgress:
		return "", fmt.Errorf("local: job %s: a savepoint is in progress: %w", jid, rest.ErrConflict)
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("local: trigger id: %w", err)
	}
	id := hex.EncodeToString(b[:])
	t := &trigger{jid: jid, sp: rest.Savepoint{Status: rest.StatusInProgress}}
	c.triggers[id] = t
	e.inProgress = true
	start := c.now()
	c.spwg.Go(func() {
		var path string
		var err error
		if stop {
			path, err = e.job.StopWithSavepoint(c.ctx, dir)
		} else {
			path, err = e.job.TriggerSavepoint(c.ctx, dir)
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		e.inProgress = false
		t.sp.Status = rest.StatusCompleted
		if err != nil {
			t.sp.Failure = err.Error()
			return
		}
		t.sp.Location = path
		e.savepoint = &rest.CompletedCheckpoint{Status: "COMPLETED", IsSavepoint: true, TriggerTimestamp: start,
			LatestAckTimestamp: c.now(), ExternalPath: path}
		if stop && c.opts.Stopped != nil {
			c.opts.Stopped(jid, path)
		}
	})
	return id, nil
}

// Savepoint answers the state of savepoint request trigger of job jid.
func (c *Cluster) Savepoint(ctx context.Context, jid, trigger string) (rest.Savepoint, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.find(jid); err != nil {
		return rest.Savepoint{}, err
	}
	t, ok := c.triggers[trigger]
	if !ok || t.jid != jid {
		return rest.Savepoint{}, fmt.Errorf("local: savepoint %s of job %s: %w", trigger, jid, rest.ErrNotFound)
	}
	return t.sp, nil
}

// Leader is "": the process is its own cluster and never forwards.
func (c *Cluster) Leader(ctx context.Context) (string, error) { return "", nil }
