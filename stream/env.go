package stream

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/internal/callsite"
	"github.com/weirdata/weir/memory"
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
	Clock flow.Clock
	// Mode is the execution mode: Streaming (the default), Batch or Automatic.
	Mode Mode
	// TmpDir is where the job's spill directory is created ("" is
	// os.TempDir()); the job removes it when it ends.
	TmpDir string
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

// Job is a running job's handle: Status, Metrics, Cancel, Wait, Done.
type Job = flow.Job

// Result is what a finished job reports: its metrics.
type Result = flow.Result

// Env collects a DataStream program and runs it. It is not safe for
// concurrent use.
type Env struct {
	opts  Options
	nodes []*node
	errs  []error
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
	return &Env{opts: opts}
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
	if len(e.errs) > 0 {
		return nil, errors.Join(e.errs...)
	}
	if len(e.nodes) == 0 {
		return nil, fmt.Errorf("stream: the program has no operators")
	}
	p, err := e.translate()
	if err != nil {
		return nil, err
	}
	return flow.Start(ctx, p.graph, flow.Options{
		Memory:       e.opts.Memory,
		BatchSize:    e.opts.BatchSize,
		FlushTimeout: e.opts.BufferTimeout,
		Streaming:    !p.batch,
		Clock:        e.opts.Clock,
		TmpDir:       e.opts.TmpDir,
	})
}

// fail records a build error with the caller's position.
func (e *Env) fail(where string, err error) {
	e.errs = append(e.errs, fmt.Errorf("stream: %s: %w", where, err))
}

// caller returns "file.go:line" of the user code that called an API
// function (skip frames above the API function itself).
func caller(skip int) string { return callsite.At(skip + 1) }
