package stream

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/stream/checkpoint"
)

// Job is a running job's handle: Status, Metrics, Snapshot, Checkpoints,
// Cancel, Wait, Done. Its methods are safe for concurrent use. A job with a
// restart strategy runs as attempts: a task failure ends the attempt, and
// the next one starts from the latest completed checkpoint; Metrics and
// Snapshot show the current attempt.
type Job struct {
	env   *Env
	ck    *CheckpointConfig
	clock flow.Clock
	hist  *checkpointHistory
	fp    string          // the job's fingerprint (Env.fingerprint)
	ctx   context.Context // the caller's
	jctx  context.Context // ends with Cancel
	stop  context.CancelFunc
	done  chan struct{}

	mu       sync.Mutex
	cur      *flow.Job
	coord    *coordinator
	coordEnd chan struct{} // closed when the attempt's coordinator returned
	canceled bool
	stopped  bool // stopped with a savepoint: the job ends Finished
	status   flow.Status
	res      *Result
	err      error
}

// startJob starts the first attempt and the goroutine that restarts
// failed ones.
func (e *Env) startJob(ctx context.Context) (*Job, error) {
	j := &Job{env: e, ck: e.checkpointConfig(), clock: e.opts.Clock, hist: &checkpointHistory{},
		fp: e.fingerprint(), ctx: ctx, done: make(chan struct{})}
	if j.clock == nil {
		j.clock = flow.SystemClock{}
	}
	if j.ck != nil {
		if err := j.ck.validate(); err != nil {
			return nil, err
		}
	}
	j.jctx, j.stop = context.WithCancel(ctx)
	snap, where, err := j.latest()
	if err != nil {
		j.stop()
		return nil, err
	}
	if snap != nil {
		j.hist.next = snap.ID
		if f := e.opts.OnRestore; f != nil {
			f(RestoreInfo{ID: snap.ID, Where: where, Finished: snap.Finished})
		}
		if snap.Finished { // FLIP-147: the job ended before; nothing is left to do but commit
			if err := e.commitFinal(snap); err != nil {
				j.stop()
				return nil, err
			}
			j.status, j.res = flow.Finished, &Result{}
			j.stop()
			close(j.done)
			return j, nil
		}
	}
	if err := j.attempt(snap, where); err != nil {
		j.stop()
		return nil, err
	}
	go j.supervise()
	return j, nil
}

// latest returns the snapshot an attempt restores from: the storage's
// latest checkpoint, else Options.Restore.
func (j *Job) latest() (*checkpoint.Snapshot, string, error) {
	if j.ck != nil {
		s, where, err := j.ck.Storage.Latest()
		if err != nil {
			return nil, "", fmt.Errorf("stream: restore: %w", err)
		}
		if s != nil {
			if s.Fingerprint != "" && s.Fingerprint != j.fp && !j.env.opts.AllowNonRestoredState {
				return nil, "", Unrecoverable(fmt.Errorf("stream: restore: %s is a checkpoint of another job (fingerprint %s, this job's %s): "+
					"a checkpoint storage serves one job; allowing non-restored state (--allow-non-restored-state) restores what maps", where, s.Fingerprint, j.fp))
			}
			return s, where, nil
		}
	}
	if s := j.env.opts.Restore; s != nil {
		return s, fmt.Sprintf("%s %d", s.Kind, s.ID), nil
	}
	return nil, "", nil
}

// attempt translates the program, restored from snap when it is not nil,
// and starts it with its checkpoint coordinator.
func (j *Job) attempt(snap *checkpoint.Snapshot, where string) error {
	e := j.env
	p, err := e.translate(snap, where)
	if err != nil {
		return err
	}
	if j.ck != nil && !p.batch {
		p.coord = newCoordinator(p, j.ck, j.clock, j.hist, snap != nil)
	}
	fj, err := flow.Start(j.jctx, p.graph, flow.Options{
		Memory:       e.opts.Memory,
		BatchSize:    e.opts.BatchSize,
		FlushTimeout: e.opts.BufferTimeout,
		Streaming:    !p.batch,
		Clock:        e.opts.Clock,
		TmpDir:       e.opts.TmpDir,
	})
	if err != nil {
		return err
	}
	if p.coord != nil {
		p.coord.cancel = fj.Cancel
	}
	end := make(chan struct{})
	j.mu.Lock()
	j.cur, j.coord, j.coordEnd = fj, p.coord, end
	j.mu.Unlock()
	if p.coord == nil {
		close(end)
		return nil
	}
	cctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-fj.Done()
		cancel()
	}()
	go func() {
		defer close(end)
		p.coord.run(cctx)
	}()
	return nil
}

// supervise waits for each attempt and restarts failed ones as the
// restart strategy says.
func (j *Job) supervise() {
	r := newRestarter(j.env.opts.Restart, j.ck != nil)
	for attempt := 1; ; attempt++ {
		j.mu.Lock()
		fj, end, coord := j.cur, j.coordEnd, j.coord
		j.mu.Unlock()
		started := j.clock.Now()
		res, err := fj.Wait()
		<-end
		var cerr error // the coordinator failed the attempt
		if coord != nil {
			cerr = coord.failure()
		}
		if cerr != nil {
			err = cerr
		}
		if err == nil && j.ck != nil {
			err = j.storeFinished()
		}
		j.mu.Lock()
		stopped := j.stopped
		j.mu.Unlock()
		if stopped {
			j.finish(res, nil, flow.Finished)
			return
		}
		if err == nil || cerr == nil && fj.Status() == flow.Canceled || j.jctx.Err() != nil {
			j.finish(res, err, fj.Status())
			return
		}
		f := AttemptFailure{Attempt: attempt, Err: err}
		var delay time.Duration
		ok := false
		if IsUnrecoverable(err) {
			f.Reason = "the failure is unrecoverable"
		} else if delay, ok = r.next(j.clock.Now(), started); !ok {
			f.Reason = "the restart strategy allows no more restarts (" + r.String() + ")"
		}
		var snap *checkpoint.Snapshot
		if ok {
			var where string
			var lerr error
			if snap, where, lerr = j.latest(); lerr != nil {
				ok, f.Reason = false, "the restore failed"
				err = errors.Join(err, lerr)
			} else {
				f.Restart, f.Delay, f.Restore = true, delay, where
			}
		}
		if cb := j.env.opts.OnAttemptFailure; cb != nil {
			cb(f)
		}
		if !ok {
			if attempt > 1 || r.s.kind != restartNone {
				err = fmt.Errorf("stream: attempt %d failed and %s: %w", attempt, f.Reason, err)
			}
			j.finish(res, err, flow.Failed)
			return
		}
		if delay > 0 {
			t := j.clock.Timer(j.clock.Now().Add(delay))
			select {
			case <-t.C():
			case <-j.jctx.Done():
			}
			t.Stop()
		}
		if j.jctx.Err() != nil {
			j.finish(res, fmt.Errorf("flow: job canceled: %w", context.Canceled), flow.Canceled)
			return
		}
		j.hist.mu.Lock()
		j.hist.restarts++
		j.hist.mu.Unlock()
		if snap != nil && j.env.opts.OnRestore != nil {
			j.env.opts.OnRestore(RestoreInfo{ID: snap.ID, Where: f.Restore, Finished: snap.Finished})
		}
		if lerr := j.attempt(snap, f.Restore); lerr != nil {
			j.finish(res, errors.Join(err, lerr), flow.Failed)
			return
		}
	}
}

// storeFinished stores the snapshot of a job whose input ended (FLIP-147's
// final checkpoint), holding what its sinks left to commit, and then
// commits that: a crash before the store restores from the checkpoint
// before (the sinks' pending files are discarded and written again), one
// after it finds the job finished and only commits (commitFinal).
func (j *Job) storeFinished() error {
	id := j.hist.nextID()
	snap := &checkpoint.Snapshot{ID: id, Kind: checkpoint.Checkpoint, Timestamp: j.clock.Now().UnixMilli(), Finished: true, Fingerprint: j.fp}
	var commits []func() error
	ids := j.env.operatorIDs()
	for _, n := range j.env.nodes {
		if n.finalize == nil {
			continue
		}
		b, commit, err := n.finalize()
		if err != nil {
			return fmt.Errorf("stream: final checkpoint %d: %s: %w", id, n.name, err)
		}
		if b != nil {
			snap.Operators = append(snap.Operators, checkpoint.OperatorState{ID: ids[n], Name: n.name, Parallelism: 1,
				Subtasks: []checkpoint.SubtaskState{{State: b}}})
			commits = append(commits, commit)
		}
	}
	if _, err := j.ck.Storage.Store(snap); err != nil {
		return fmt.Errorf("stream: final checkpoint %d: %w", id, err)
	}
	for _, commit := range commits {
		if err := commit(); err != nil {
			return fmt.Errorf("stream: final checkpoint %d: %w", id, err)
		}
	}
	return nil
}

// commitFinal commits what a finished job's final snapshot holds of its
// sinks.
func (e *Env) commitFinal(snap *checkpoint.Snapshot) error {
	ids := e.operatorIDs()
	for _, n := range e.nodes {
		if n.commitFinal == nil {
			continue
		}
		op := snap.Operator(ids[n])
		if op == nil {
			continue
		}
		for _, st := range op.Subtasks {
			if err := n.commitFinal(st.State); err != nil {
				return fmt.Errorf("stream: restore of the finished job: %w", err)
			}
		}
	}
	return nil
}

func (j *Job) finish(res *Result, err error, status flow.Status) {
	if err != nil && status == flow.Finished {
		status = flow.Failed
	}
	j.mu.Lock()
	j.res, j.err, j.status = res, err, status
	j.mu.Unlock()
	j.stop()
	close(j.done)
}

// Status returns the job's status now: Running while an attempt runs or
// waits to restart.
func (j *Job) Status() flow.Status {
	select {
	case <-j.done:
		j.mu.Lock()
		defer j.mu.Unlock()
		return j.status
	default:
		return flow.Running
	}
}

// Done returns a channel closed once the job ended and everything it
// started returned.
func (j *Job) Done() <-chan struct{} { return j.done }

// Cancel cancels the job; Wait returns once it ended.
func (j *Job) Cancel() {
	j.mu.Lock()
	j.canceled = true
	cur := j.cur
	j.mu.Unlock()
	if cur != nil {
		cur.Cancel()
	}
	j.stop()
}

// Wait waits for the job's end and returns the last attempt's metrics and
// the job's error.
func (j *Job) Wait() (*Result, error) {
	<-j.done
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.res, j.err
}

// Metrics returns the current attempt's metrics per vertex and subtask.
func (j *Job) Metrics() []flow.VertexMetrics {
	j.mu.Lock()
	cur := j.cur
	j.mu.Unlock()
	if cur == nil {
		return nil
	}
	return cur.Metrics()
}

// Snapshot returns the current attempt's metrics now.
func (j *Job) Snapshot() Snapshot {
	j.mu.Lock()
	cur := j.cur
	j.mu.Unlock()
	if cur == nil {
		return Snapshot{}
	}
	return cur.Snapshot()
}

// Checkpoints returns the statistics of the job's completed checkpoints,
// oldest first, over all its attempts.
func (j *Job) Checkpoints() CheckpointHistory {
	h := j.hist
	h.mu.Lock()
	defer h.mu.Unlock()
	return CheckpointHistory{Completed: append([]CheckpointStats(nil), h.stats...),
		Restores: append([]time.Duration(nil), h.restores...), Restarts: h.restarts}
}

// CheckpointHistory is a job's checkpoints (Job.Checkpoints): the completed
// ones, the time each restore took from the start of its attempt until
// every task ran with its state, and the number of restarts.
type CheckpointHistory struct {
	Completed []CheckpointStats
	Restores  []time.Duration
	Restarts  int
}

// TriggerCheckpoint triggers a checkpoint now (Flink's manual checkpoint
// trigger), once every task of the current attempt runs, and waits until
// it completed; it returns its id, or why it was aborted.
func (j *Job) TriggerCheckpoint(ctx context.Context) (int64, error) {
	j.mu.Lock()
	c := j.coord
	j.mu.Unlock()
	if c == nil {
		return 0, fmt.Errorf("stream: the job does not checkpoint: call EnableCheckpointing")
	}
	select {
	case r := <-c.request():
		return r.id, r.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// StopWithSavepoint stops the job with a savepoint into dir (Flink's
// stopWithSavepoint): the next checkpoint is a savepoint whose barrier
// each source emits last, reading nothing after it; once the savepoint is
// written (checkpoint.WriteSavepoint) its completion is notified to every
// task, so that the sinks commit what it covers, and the job is stopped:
// it ends Finished and Wait returns no error. It returns the savepoint's
// path. If the savepoint is aborted (a task finished first, or the write
// failed) the sources read on, the job keeps running and the error says
// why.
func (j *Job) StopWithSavepoint(ctx context.Context, dir string) (string, error) {
	if dir == "" {
		return "", errors.New("stream: stop with savepoint: no savepoint directory")
	}
	j.mu.Lock()
	c := j.coord
	j.mu.Unlock()
	if c == nil {
		return "", errors.New("stream: stop with savepoint: the job does not checkpoint: call EnableCheckpointing")
	}
	req := c.requestSavepoint(dir)
	var r savepointResult
	select {
	case r = <-req.res:
	case <-j.done:
		return "", errors.New("stream: stop with savepoint: the job ended first")
	case <-ctx.Done():
		return "", fmt.Errorf("stream: stop with savepoint: %w", ctx.Err())
	}
	if r.err != nil {
		return "", fmt.Errorf("stream: stop with savepoint: %w", r.err)
	}
	select {
	case <-r.notified:
	case <-j.done:
	case <-ctx.Done():
		return r.path, fmt.Errorf("stream: stop with savepoint %s: %w", r.path, ctx.Err())
	}
	j.mu.Lock()
	j.stopped = true
	j.mu.Unlock()
	j.Cancel()
	<-j.done
	return r.path, nil
}
