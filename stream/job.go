package stream

import (
	"context"
	"sync"
	"time"

	"github.com/weirdata/weir/clock"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/stream/internal/coordinator"
	"github.com/weirdata/weir/stream/internal/graph"
	"github.com/weirdata/weir/stream/internal/runner"
)

// Job is a running job's handle: Status, Metrics, Overview, Checkpoints,
// Cancel, Wait, Done. Its methods are safe for concurrent use. A job with a
// restart strategy runs as attempts: a task failure ends the attempt, and
// the next one starts from the latest completed checkpoint; Metrics and
// Overview show the current attempt.
type Job struct {
	j        *runner.Job
	failures *failureLog
}

// Exception is a failed attempt of a job, as Job.Exceptions lists it:
// its number (1 for the first), when it failed on the job's clock, and
// why.
type Exception struct {
	Attempt int
	Time    time.Time
	Err     string
}

// maxExceptions bounds the failures a Job keeps: the oldest are dropped.
const maxExceptions = 64

// failureLog keeps a job's failed attempts.
type failureLog struct {
	mu        sync.Mutex
	list      []Exception
	truncated bool
}

func (l *failureLog) add(e Exception) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.list) == maxExceptions {
		l.list = append(l.list[:0], l.list[1:]...)
		l.truncated = true
	}
	l.list = append(l.list, e)
}

// Exceptions returns the job's failed attempts, oldest first (Flink's
// exception history), and whether older ones were dropped: it keeps the
// last 64. The failure that ended a failed job is the last.
func (j *Job) Exceptions() ([]Exception, bool) {
	j.failures.mu.Lock()
	defer j.failures.mu.Unlock()
	return append([]Exception(nil), j.failures.list...), j.failures.truncated
}

// startJob starts the job's first attempt and the goroutine that restarts
// failed ones.
func (e *Env) startJob(ctx context.Context) (*Job, error) {
	fp := e.fingerprint()
	cfg := runner.Config{Program: e.p, Graph: e.graphOptions(), Restore: e.opts.Restore,
		AllowNonRestoredState: e.opts.AllowNonRestoredState, Restart: e.opts.Restart.strategy(), Clock: e.opts.Clock,
		Flow: flow.Options{Memory: e.opts.Memory, BatchSize: e.opts.BatchSize, BufferTimeout: e.opts.BufferTimeout,
			Clock: e.opts.Clock, TmpDir: e.opts.TmpDir}, Fingerprint: fp}
	if sp := e.opts.Spread; sp != nil {
		if err := sp.check(&e.opts); err != nil {
			return nil, err
		}
		cfg.ID, cfg.Spread, cfg.Restart = sp.Job, sp.runner(), NoRestart().strategy()
	}
	failures, clk := &failureLog{}, e.opts.Clock
	if clk == nil {
		clk = clock.System{}
	}
	cb := e.opts.OnAttemptFailure
	cfg.OnAttemptFailure = func(f runner.AttemptFailure) {
		failures.add(Exception{Attempt: f.Attempt, Time: clk.Now(), Err: f.Err.Error()})
		if cb != nil {
			cb(AttemptFailure(f))
		}
	}
	if cb := e.opts.OnRestore; cb != nil {
		cfg.OnRestore = func(r runner.RestoreInfo) { cb(RestoreInfo(r)) }
	}
	if ck := e.checkpointConfig(); ck != nil {
		if err := ck.validate(); err != nil {
			return nil, err
		}
		cfg.Checkpoints = &coordinator.Config{Interval: ck.Interval, Timeout: ck.Timeout, MinPause: ck.MinPauseBetweenCheckpoints,
			MaxConcurrent: ck.MaxConcurrentCheckpoints, Storage: ck.Storage, Clock: e.opts.Clock,
			TolerableFailures: ck.TolerableFailures, OnFailure: ck.OnFailure, Fingerprint: fp, Gate: ck.CompletionGate}
	}
	j, err := runner.Start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &Job{j: j, failures: failures}, nil
}

// graphOptions are the options the program resolves with.
func (e *Env) graphOptions() graph.Options {
	o := graph.Options{Parallelism: e.opts.Parallelism, MaxParallelism: e.opts.MaxParallelism, Mode: graph.Mode(e.opts.Mode),
		BatchSize: e.opts.BatchSize, AutoWatermarkInterval: e.opts.AutoWatermarkInterval, SourceRate: e.opts.SourceRate,
		Clock: e.opts.Clock, StateBackend: e.opts.StateBackend.task(), TmpDir: e.opts.TmpDir, Incremental: e.opts.Incremental}
	if ck := e.checkpointConfig(); ck != nil {
		o.Checkpoints = &graph.Checkpoints{AtLeastOnce: ck.Mode == AtLeastOnce, Unaligned: ck.Unaligned,
			AlignedTimeout: ck.AlignedCheckpointTimeout, Storage: ck.Storage}
	}
	return o
}

// ID returns the job's id: 32 hex digits, as Flink's JobID.
func (j *Job) ID() string { return j.j.ID() }

// Status returns the job's status now: Running while an attempt runs or
// waits to restart.
func (j *Job) Status() Status { return j.j.Status() }

// Done returns a channel closed once the job ended and everything it
// started returned.
func (j *Job) Done() <-chan struct{} { return j.j.Done() }

// Cancel cancels the job; Wait returns once it ended.
func (j *Job) Cancel() { j.j.Cancel() }

// Wait waits for the job's end and returns the last attempt's metrics and
// the job's error.
func (j *Job) Wait() (*Result, error) { return j.j.Wait() }

// Metrics returns the current attempt's metrics per vertex and subtask.
func (j *Job) Metrics() []VertexMetrics {
	if cur := j.j.Current(); cur != nil {
		return cur.Metrics()
	}
	return nil
}

// Overview returns the current attempt's metrics now.
func (j *Job) Overview() Overview {
	if cur := j.j.Current(); cur != nil {
		return cur.Overview()
	}
	return Overview{}
}

// Checkpoints returns the statistics of the job's completed checkpoints,
// oldest first, over all its attempts.
func (j *Job) Checkpoints() CheckpointHistory {
	stats, restores, restarts := j.j.History().Read()
	h := CheckpointHistory{Restores: restores, Restarts: restarts, Failed: j.j.History().Failed()}
	for _, s := range stats {
		h.Completed = append(h.Completed, CheckpointStats(s))
	}
	return h
}

// CheckpointStats is one completed checkpoint, as Flink's checkpoint
// statistics: its id, when it was triggered, how long it took from the
// trigger to the end of Store (on the job's Clock), its size, the longest
// barrier alignment of a task, and where the storage keeps it.
//
// Size is the bytes the checkpoint wrote (Flink's checkpointed data size):
// its inline state, channel state and, for an incremental checkpoint, the
// shared files it added. FullSize is the bytes of all the state it
// restores from (Flink's full checkpoint data size): with the shared files
// it names that earlier checkpoints wrote. Without shared files the two
// are equal. InFlight is the bytes of channel state the checkpoint
// persisted (unaligned checkpoints): the records in flight between the
// tasks.
type CheckpointStats struct {
	ID        int64
	Triggered time.Time
	Duration  time.Duration
	Size      int64
	FullSize  int64
	Alignment time.Duration
	Path      string
	InFlight  int64
}

// CheckpointHistory is a job's checkpoints (Job.Checkpoints): the completed
// ones, the time each restore took from the start of its attempt until
// every task ran with its state, the number of restarts, and the number
// of checkpoints that failed (expired, declined or not stored; a failed
// savepoint is its caller's error and not counted).
type CheckpointHistory struct {
	Completed []CheckpointStats
	Restores  []time.Duration
	Restarts  int
	Failed    int
}

// TriggerCheckpoint triggers a checkpoint now (Flink's manual checkpoint
// trigger), once every task of the current attempt runs, and waits until
// it completed; it returns its id, or why it was aborted.
func (j *Job) TriggerCheckpoint(ctx context.Context) (int64, error) {
	return j.j.TriggerCheckpoint(ctx)
}

// TriggerSavepoint writes a savepoint of the running job into dir (Flink's
// triggerSavepoint) and returns its path; the job runs on. The savepoint
// is a full snapshot in the canonical format, as StopWithSavepoint's, but
// its completion is not notified to the operators (Flink's intermediate
// savepoint): a sink commits nothing on it, because a failure restores the
// last checkpoint, not the savepoint; what it covers is committed with
// the next checkpoint. Restore it with Options.Restore. It fails when the
// job does not checkpoint, when a savepoint is in progress, and when the
// savepoint is aborted (the error says why); the job runs on then too.
func (j *Job) TriggerSavepoint(ctx context.Context, dir string) (string, error) {
	return j.j.TriggerSavepoint(ctx, dir)
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
	return j.j.StopWithSavepoint(ctx, dir)
}
