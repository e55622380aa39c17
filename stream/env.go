package stream

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/weirdata/weir/clock"
	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/internal/callsite"
	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/stream/checkpoint"
	"github.com/weirdata/weir/stream/internal/graph"
	"github.com/weirdata/weir/stream/watermark"
)

// Options configures an Env. The zero value runs on all cores with the
// default memory budget.
type Options struct {
	// Parallelism is the default number of subtasks of every operator; zero
	// means runtime.GOMAXPROCS(0).
	Parallelism int
	// MaxParallelism is the number of key groups of keyed operators; zero
	// means state.DefaultMaxParallelism of each operator's parallelism.
	MaxParallelism int
	// Memory is the managed memory budget of a job in bytes; zero means
	// memory.DefaultBudget(), negative means none. While Execute runs, the
	// Go runtime's soft memory limit follows it (memory.LimitRuntime).
	Memory int64
	// AutoWatermarkInterval is how often sources ask their watermark
	// generators for a watermark; zero means watermark.DefaultAutoInterval.
	AutoWatermarkInterval time.Duration
	// BufferTimeout is how long a partial batch waits before it is sent
	// downstream (Flink's buffer timeout); zero means flow's default,
	// negative means batches go only when full (or before an event).
	BufferTimeout time.Duration
	// BatchSize is the number of records per batch; zero means flow's default.
	BatchSize int
	// Clock is the processing-time clock; nil means the system clock.
	Clock clock.Clock
	// Mode is the execution mode: Streaming (the default), Batch or Automatic.
	Mode Mode
	// TmpDir is where the job's spill directory is created ("" is
	// os.TempDir()); the job removes it when it ends.
	TmpDir string
	// Planned, when set, receives the program's plan (Env.Plan) before the
	// job starts; an error it returns stops Start and Execute before
	// anything runs and is returned (weir explain prints the plan so).
	Planned func(*Plan) error
	// Started, when set, receives the job's handle once it started: to
	// watch its metrics (Job.Overview) while Execute waits.
	Started func(*Job)
	// Restore, when set, is the snapshot (a checkpoint or savepoint) the
	// job opens its operators from; without it a job with checkpoints
	// restores from its Storage's latest snapshot, if any.
	Restore *checkpoint.Snapshot
	// AllowNonRestoredState lets a restore skip the state of operators the
	// program no longer has (Flink's --allowNonRestoredState).
	AllowNonRestoredState bool
	// Restart says whether and when the job restarts after a task failure;
	// nil means Flink's default (see RestartStrategy).
	Restart *RestartStrategy
	// OnAttemptFailure, when set, is called for each failed attempt of the
	// job, before its restart or its end, from the job's goroutine.
	OnAttemptFailure func(AttemptFailure)
	// OnRestore, when set, is called each time the job restores from a
	// snapshot of its checkpoint storage or from Restore, before the
	// attempt starts.
	OnRestore func(RestoreInfo)
	// Fingerprint names the job beyond its operators (its name, its
	// inputs). A job stores the hash of it and of its operators' ids in
	// each checkpoint, and refuses to restore from its checkpoint storage a
	// checkpoint of another job, unless AllowNonRestoredState.
	Fingerprint string
	// StateBackend is where keyed operators keep their keyed state:
	// HeapBackend (the default) or DiskBackend (Flink's state.backend.type).
	StateBackend StateBackend
	// Incremental makes the checkpoints of a DiskBackend incremental
	// (Flink's state.backend.incremental) when the checkpoint storage keeps
	// shared files, as a checkpoint.Dir does; false takes full snapshots.
	Incremental bool
	// SourceRate, when positive, throttles every source of the job to this
	// many records per second on Clock, split evenly over its subtasks (as
	// Flink's RateLimiterStrategy.perSecond); zero reads at full speed.
	SourceRate float64
	// Spread, when set, runs this process's part of a job spread over
	// several processes (see Spread).
	Spread *Spread
}

// Mode is a job's execution mode, as Flink's RuntimeExecutionMode.
type Mode uint8

// The execution modes.
const (
	// Streaming runs every operator continuously: rolling aggregations emit
	// a running result per record.
	Streaming Mode = iota
	// Batch runs a bounded job as FLIP-134: keyed inputs sorted by key,
	// final results only.
	Batch
	// Automatic is Batch when every source is bounded, else Streaming.
	Automatic
)

// Result is what a finished job reports: its metrics.
type Result = flow.Result

// Status is where a job is in its life (Job.Status): Created, then
// Running, then one of Finished, Failed and Canceled.
type Status = flow.Status

// The statuses of a job.
const (
	Created  = flow.Created
	Running  = flow.Running
	Finished = flow.Finished
	Failed   = flow.Failed
	Canceled = flow.Canceled
)

// VertexMetrics is one task's counters per subtask (Job.Metrics): records
// and bytes in and out, busy, idle and backpressured time, the watermark.
type VertexMetrics = flow.VertexMetrics

// SubtaskMetrics is what one subtask of a VertexMetrics or VertexOverview
// did, with its operators' counters and its user metrics.
type SubtaskMetrics = flow.SubtaskMetrics

// Overview is a running job's metrics at one instant (Job.Overview): per
// task and chained operator the records in and out with their rates, the
// watermark (watermark.Min before any, watermark.Max once a bounded input
// ended) and its lag behind the job's clock, and the shares of time busy,
// idle and backpressured, as Flink's web UI shows them.
type Overview = flow.Overview

// VertexOverview is one task of an Overview; OperatorOverview one operator
// of its chain; MemoryOverview the job's managed memory.
type (
	VertexOverview   = flow.VertexOverview
	OperatorOverview = flow.OperatorOverview
	MemoryOverview   = flow.MemoryOverview
)

// Env collects a DataStream program and runs it. It is not safe for
// concurrent use.
type Env struct {
	opts Options
	p    *graph.Program
	ck   *CheckpointConfig // nil: no checkpoints
}

// New returns an empty program.
func New(opts Options) *Env {
	if opts.Parallelism <= 0 {
		opts.Parallelism = runtime.GOMAXPROCS(0)
	}
	if opts.Memory == 0 {
		opts.Memory = memory.DefaultBudget()
	}
	opts.Memory = max(opts.Memory, 0)
	if opts.AutoWatermarkInterval <= 0 {
		opts.AutoWatermarkInterval = watermark.DefaultAutoInterval
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = flow.DefaultBatchSize
	}
	return &Env{opts: opts, p: &graph.Program{}}
}

// Parallelism returns the default parallelism of the program's operators.
func (e *Env) Parallelism() int { return e.opts.Parallelism }

// Execute runs the program until every source ended and returns its
// metrics, or the first error found while building the program, or the
// job's failure. An unbounded program runs until ctx ends.
func (e *Env) Execute(ctx context.Context) (*Result, error) {
	defer memory.LimitRuntime(e.opts.Memory)()
	j, err := e.Start(ctx)
	if err != nil {
		return nil, err
	}
	return j.Wait()
}

// Start starts the program and returns its handle at once: for unbounded
// programs, which run until cancelled.
func (e *Env) Start(ctx context.Context) (*Job, error) {
	if err := e.check(); err != nil {
		return nil, err
	}
	if e.opts.Planned != nil {
		plan, err := e.Plan()
		if err != nil {
			return nil, err
		}
		if err := e.opts.Planned(plan); err != nil {
			return nil, err
		}
	}
	j, err := e.startJob(ctx)
	if err == nil && e.opts.Started != nil {
		e.opts.Started(j)
	}
	return j, err
}

// check returns the errors found while building the program.
func (e *Env) check() error {
	if len(e.p.Errs) > 0 {
		return errors.Join(e.p.Errs...)
	}
	if len(e.p.Nodes) == 0 {
		return fmt.Errorf("stream: the program has no operators")
	}
	for _, n := range e.p.Nodes {
		if n.Sink {
			return nil
		}
	}
	return fmt.Errorf("stream: the program has no sink: add Print, Collect or SinkTo, so that its results go somewhere")
}

// fail records a build error with the caller's position.
func (e *Env) fail(where string, err error) { e.p.Fail(where, err) }

// caller returns "file.go:line" of the user code that called an API
// function (skip frames above the API function itself).
func caller(skip int) string { return callsite.At(skip + 1) }
