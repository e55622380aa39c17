package stream

import (
	"context"
	"fmt"
	"time"

	"github.com/weirdata/weir/stream/checkpoint"
)

// CheckpointingMode is the guarantee of a job's checkpoints, as Flink's
// CheckpointingMode.
type CheckpointingMode uint8

const (
	// ExactlyOnce aligns barriers: a task's input channel that delivered
	// barrier n waits until every channel delivered it, so a snapshot holds
	// the effect of exactly the records before the barrier.
	ExactlyOnce CheckpointingMode = iota
	// AtLeastOnce does not align: a task's channels keep delivering records
	// after their barrier, and the task snapshots once the last channel
	// delivered it; a restore may replay records whose effect the snapshot
	// holds already.
	AtLeastOnce
)

func (m CheckpointingMode) String() string {
	if m == AtLeastOnce {
		return "AT_LEAST_ONCE"
	}
	return "EXACTLY_ONCE"
}

// The defaults of CheckpointConfig, Flink's.
const (
	DefaultCheckpointTimeout        = 10 * time.Minute
	DefaultMaxConcurrentCheckpoints = 1
)

// CheckpointConfig configures a job's checkpoints, as Flink's
// CheckpointConfig. Env.EnableCheckpointing returns the Env's, to adjust.
type CheckpointConfig struct {
	// Interval is the time between the triggers of two checkpoints, on the
	// job's Clock.
	Interval time.Duration
	// Mode is ExactlyOnce (the default) or AtLeastOnce.
	Mode CheckpointingMode
	// Timeout aborts a checkpoint that did not complete in time; zero
	// means DefaultCheckpointTimeout.
	Timeout time.Duration
	// MinPauseBetweenCheckpoints is the least time between the end of one
	// checkpoint and the trigger of the next.
	MinPauseBetweenCheckpoints time.Duration
	// MaxConcurrentCheckpoints is how many checkpoints may be in progress
	// at once; zero means DefaultMaxConcurrentCheckpoints.
	MaxConcurrentCheckpoints int
	// Storage keeps the completed checkpoints; nil means a
	// checkpoint.NewMemory(1) of each job started, which its restarts
	// restore from.
	Storage checkpoint.Storage
	// Unaligned enables unaligned checkpoints (Flink's
	// enableUnalignedCheckpoints, FLIP-76), in ExactlyOnce mode with one
	// checkpoint at a time: a task's first barrier overtakes the records
	// queued at its inputs and outputs; the task snapshots at once and
	// persists the records the barriers overtook as channel state
	// (SubtaskState.InFlight), which a restore sends again before anything
	// new. Checkpoints then complete under backpressure in about the time
	// a barrier takes to pass the tasks. Every record type sent between
	// tasks needs a memory.Codec.
	Unaligned bool
	// AlignedCheckpointTimeout, with Unaligned, starts each checkpoint
	// aligned: a task whose barrier alignment is not done this long after
	// the checkpoint's trigger switches to unaligned (Flink's
	// alignedCheckpointTimeout). Zero means unaligned from the start.
	AlignedCheckpointTimeout time.Duration
	// TolerableFailures is how many checkpoints may fail in a row (Flink's
	// tolerableCheckpointFailureNumber): the next failure fails the job
	// attempt, naming the checkpoint and its cause, and the restart
	// strategy decides what follows. Zero, Flink's default, fails it at
	// the first failed checkpoint; negative tolerates any number. A
	// completed checkpoint resets the count; failed savepoints do not
	// count.
	TolerableFailures int
	// OnFailure, when set, is called with each checkpoint that failed
	// (declined by a task, expired, or not stored) and its cause, from the
	// coordinator's goroutine.
	OnFailure func(id int64, err error)
	// CompletionGate, when set, is called with each checkpoint once its
	// snapshot is stored and before it counts as complete: before the
	// sinks commit and the CheckpointListeners hear of it, the final
	// checkpoint of a finished job included (savepoints are not gated).
	// A cluster's TaskManager records the checkpoint with its JobManager
	// here. An error aborts the checkpoint and fails the job attempt,
	// whatever TolerableFailures says; nothing of the checkpoint is
	// committed. The snapshot stays in Storage, so a restart of the job
	// in process may restore it: a gate that fences a job (a cluster's)
	// runs it with NoRestart and leaves restarts to whoever deploys it.
	// ctx ends when the attempt's run does: a call still waiting then
	// (its input ended while the answer was on its way) aborts that
	// checkpoint without failing the job, which stores its final
	// checkpoint next.
	CompletionGate func(ctx context.Context, id int64, path string) error
}

// validate checks the combinations Flink refuses.
func (c *CheckpointConfig) validate() error {
	if !c.Unaligned {
		return nil
	}
	if c.Mode != ExactlyOnce {
		return fmt.Errorf("stream: unaligned checkpoints need checkpointing mode EXACTLY_ONCE, not %v", c.Mode)
	}
	if c.MaxConcurrentCheckpoints > 1 {
		return fmt.Errorf("stream: unaligned checkpoints need max concurrent checkpoints 1, not %d", c.MaxConcurrentCheckpoints)
	}
	if c.AlignedCheckpointTimeout < 0 {
		return fmt.Errorf("stream: the aligned checkpoint timeout %v is negative", c.AlignedCheckpointTimeout)
	}
	return nil
}

// EnableCheckpointing makes the job checkpoint its state every interval of
// its Clock (Flink's enableCheckpointing) and returns the configuration to
// adjust. A job with checkpoints restores from its Storage's latest
// snapshot when it starts, and after a task failure restarts from it as
// its RestartStrategy says.
func (e *Env) EnableCheckpointing(interval time.Duration) *CheckpointConfig {
	if interval <= 0 {
		e.fail(caller(1), fmt.Errorf("EnableCheckpointing: the checkpoint interval %v must be positive", interval))
	}
	if e.ck == nil {
		e.ck = &CheckpointConfig{}
	}
	e.ck.Interval = interval
	return e.ck
}

// CheckpointConfig returns the job's checkpoint configuration, or nil when
// checkpointing is not enabled.
func (e *Env) CheckpointConfig() *CheckpointConfig { return e.ck }

// checkpointConfig returns the configuration with defaults filled in, or
// nil.
func (e *Env) checkpointConfig() *CheckpointConfig {
	if e.ck == nil {
		return nil
	}
	c := *e.ck
	if c.Timeout <= 0 {
		c.Timeout = DefaultCheckpointTimeout
	}
	if c.MaxConcurrentCheckpoints <= 0 {
		c.MaxConcurrentCheckpoints = DefaultMaxConcurrentCheckpoints
	}
	if c.Storage == nil {
		c.Storage = checkpoint.NewMemory(1) // the job's, kept across its restarts
	}
	return &c
}
