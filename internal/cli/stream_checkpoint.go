package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/weirdata/weir/examples/streaming"
	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/checkpoint"
	"github.com/weirdata/weir/stream/checkpoint/s3"
)

// checkpointFlags are the flags every `weir run <stream job>` shares:
// checkpoints, the state backend, the source throttle and savepoints.
type checkpointFlags struct {
	f                *pflag.FlagSet
	stderr           io.Writer
	dir              string
	interval         time.Duration
	mode             string
	backend          string
	incremental      bool
	unaligned        bool
	rate             float64
	savepointDir     string
	fromSavepoint    string
	allowNonRestored bool
	restart          string
	attempts         int
	restartDelay     time.Duration
	failureInterval  time.Duration
	tolerable        int
	// plan: the flags configure a plan only; no directory is opened.
	plan bool
	// retained is how many complete checkpoints the directory keeps (0:
	// checkpoint.Dir's default, 1).
	retained int
	// follower opens the checkpoint directory as a follower
	// (checkpoint.DirOptions.Follower): a share of a spread attempt but
	// the first
	follower bool
	// storage is the checkpoint directory opened (and locked) by apply,
	// closed by close.
	storage *checkpoint.Dir
}

// register adds the flags to f.
func (c *checkpointFlags) register(f *pflag.FlagSet) {
	c.f = f
	f.StringVar(&c.dir, "checkpoint-dir", "", "directory (or s3://bucket/prefix) to keep the job's checkpoints in; a run of the same command resumes from its latest")
	f.DurationVar(&c.interval, "checkpoint-interval", time.Second, "time between two checkpoints (when --checkpoint-dir or --savepoint-dir is set)")
	f.StringVar(&c.mode, "checkpointing-mode", "exactly-once", "exactly-once (aligned barriers) or at-least-once")
	f.StringVar(&c.backend, "state-backend", "heap", "where keyed state lives: heap (in memory) or disk (an embedded Pebble store)")
	f.BoolVar(&c.incremental, "incremental-checkpoints", false, "with --state-backend disk and --checkpoint-dir, checkpoint only the files changed since the last checkpoint")
	f.BoolVar(&c.unaligned, "unaligned-checkpoints", false, "let barriers overtake records in flight, which are stored with the checkpoint (exactly-once only)")
	if f.Lookup("rate") == nil { // else the job's generator has its own rate
		f.Float64Var(&c.rate, "rate", 0, "throttle every source to N records per second (0: full speed)")
	}
	f.StringVar(&c.savepointDir, "savepoint-dir", "", "on SIGTERM, stop the job with a savepoint written under this directory (or s3:// URL, in the bucket of --checkpoint-dir)")
	f.StringVar(&c.fromSavepoint, "from-savepoint", "", "savepoint or checkpoint (directory, _metadata file or their s3:// URL) to start the job from")
	f.BoolVar(&c.allowNonRestored, "allow-non-restored-state", false, "with --from-savepoint, skip the state of operators the job no longer has; with --checkpoint-dir, restore another job's checkpoint as far as it maps")
	f.StringVar(&c.restart, "restart-strategy", "", "after a failure: none, fixed-delay, exponential-delay or failure-rate (default: exponential-delay when the job checkpoints, else none)")
	f.IntVar(&c.attempts, "restart-attempts", 3, "fixed-delay and exponential-delay: restarts allowed (in a row, for exponential-delay); failure-rate: failures allowed per --restart-failure-interval")
	f.DurationVar(&c.restartDelay, "restart-delay", time.Second, "wait before a restart (exponential-delay: before the first, then 1.5 times longer each, up to 1m)")
	f.DurationVar(&c.failureInterval, "restart-failure-interval", time.Minute, "failure-rate: the window the failures are counted in")
	f.IntVar(&c.tolerable, "tolerable-failed-checkpoints", 0, "checkpoints that may fail in a row before the job attempt fails (-1: any number)")
}

// restartStrategy returns the strategy the restart flags name.
func (c *checkpointFlags) restartStrategy() (*stream.RestartStrategy, error) {
	if c.attempts < 0 {
		return nil, &usageError{err: fmt.Errorf("--restart-attempts must not be negative, got %d", c.attempts)}
	}
	if c.restartDelay < 0 || c.failureInterval <= 0 {
		return nil, &usageError{err: fmt.Errorf("--restart-delay must not be negative and --restart-failure-interval must be positive, got %v and %v", c.restartDelay, c.failureInterval)}
	}
	name := c.restart
	if name == "" {
		name = "none"
		if c.checkpointing() {
			name = "exponential-delay"
		}
	}
	switch name {
	case "none", "disable", "off":
		return stream.NoRestart(), nil
	case "fixed-delay", "fixeddelay":
		return stream.FixedDelayRestart(c.attempts, c.restartDelay), nil
	case "exponential-delay", "exponentialdelay":
		if c.attempts == 0 {
			return stream.NoRestart(), nil
		}
		return stream.ExponentialDelayRestart(c.restartDelay, max(time.Minute, c.restartDelay), 1.5, time.Hour, 0.1).WithAttempts(c.attempts), nil
	case "failure-rate", "failurerate":
		return stream.FailureRateRestart(c.attempts+1, c.failureInterval, c.restartDelay), nil
	}
	return nil, &usageError{err: fmt.Errorf("--restart-strategy must be none, fixed-delay, exponential-delay or failure-rate, got %q", c.restart)}
}

// close releases the checkpoint directory apply opened.
func (c *checkpointFlags) close() error {
	if c.storage == nil {
		return nil
	}
	err := c.storage.Close()
	c.storage = nil
	return err
}

// resumes says whether the job starts from a snapshot: --from-savepoint, or
// a complete checkpoint in --checkpoint-dir.
func (c *checkpointFlags) resumes() bool {
	return c.fromSavepoint != "" || c.storage != nil && len(c.storage.Retained()) > 0
}

// checkpointing says whether the job checkpoints: with a checkpoint or
// savepoint directory, or an interval given.
func (c *checkpointFlags) checkpointing() bool {
	return c.dir != "" || c.savepointDir != "" || c.f.Changed("checkpoint-interval")
}

// apply checks the flags and sets o for them: the throttle, the state
// backend, the snapshot to start from, and Configure enabling checkpoints
// into --checkpoint-dir (in memory without it).
func (c *checkpointFlags) apply(o *streaming.Options) error {
	if c.rate < 0 {
		return &usageError{err: fmt.Errorf("--rate must not be negative, got %v", c.rate)}
	}
	o.Stream.SourceRate = c.rate
	if err := setStateBackend(c.backend, &o.Stream); err != nil {
		return err
	}
	if c.incremental && o.Stream.StateBackend != stream.DiskBackend {
		return &usageError{err: errors.New("--incremental-checkpoints needs --state-backend disk")}
	}
	o.Stream.Incremental = c.incremental
	var mode stream.CheckpointingMode
	switch c.mode {
	case "exactly-once", "EXACTLY_ONCE":
		mode = stream.ExactlyOnce
	case "at-least-once", "AT_LEAST_ONCE":
		mode = stream.AtLeastOnce
	default:
		return &usageError{err: fmt.Errorf("--checkpointing-mode must be exactly-once or at-least-once, got %q", c.mode)}
	}
	if c.unaligned && mode != stream.ExactlyOnce {
		return &usageError{err: errors.New("--unaligned-checkpoints needs --checkpointing-mode exactly-once")}
	}
	if c.allowNonRestored && c.fromSavepoint == "" && c.dir == "" {
		return &usageError{err: errors.New("--allow-non-restored-state needs --from-savepoint or --checkpoint-dir")}
	}
	if c.tolerable < -1 {
		return &usageError{err: fmt.Errorf("--tolerable-failed-checkpoints must be -1 or more, got %d", c.tolerable)}
	}
	restart, err := c.restartStrategy()
	if err != nil {
		return err
	}
	o.Stream.Restart = restart
	o.Stream.AllowNonRestoredState = c.allowNonRestored
	if s3.IsURL(c.savepointDir) && !s3.IsURL(c.dir) {
		return &usageError{err: fmt.Errorf("--savepoint-dir %s: savepoints go to S3 with --checkpoint-dir in the same bucket", c.savepointDir)}
	}
	if c.fromSavepoint != "" {
		snap, err := loadSnapshot(c.fromSavepoint)
		if err != nil {
			return fmt.Errorf("--from-savepoint: %w", err)
		}
		o.Stream.Restore, o.Stream.AllowNonRestoredState = snap, c.allowNonRestored
	}
	if !c.checkpointing() {
		return nil
	}
	if c.savepointDir != "" && !s3.IsURL(c.savepointDir) && !c.plan {
		removed, err := checkpoint.RemoveStaleSavepoints(c.savepointDir)
		if err != nil {
			return fmt.Errorf("--savepoint-dir: %w", err)
		}
		for _, p := range removed {
			c.say("removed %s, a savepoint a killed run did not finish", p)
		}
	}
	if c.interval <= 0 {
		return &usageError{err: fmt.Errorf("--checkpoint-interval must be positive, got %v", c.interval)}
	}
	var storage checkpoint.Storage
	if c.dir != "" && !c.plan {
		skipped := map[string]bool{} // OpenDir and the restore pass over the same ones
		opts := checkpoint.DirOptions{Retained: c.retained, Follower: c.follower, OnSkip: func(path string, err error) {
			if !skipped[path] {
				skipped[path] = true
				c.say("checkpoint %s is damaged and skipped: %v", path, err)
			}
		}}
		d, err := openStorage(c.dir, opts)
		if err != nil {
			return fmt.Errorf("--checkpoint-dir: %w", err)
		}
		storage, c.storage = d, d
	}
	interval, unaligned, tolerable := c.interval, c.unaligned, c.tolerable
	o.Configure = func(env *stream.Env) {
		cfg := env.EnableCheckpointing(interval)
		cfg.Mode = mode
		cfg.Unaligned = unaligned
		cfg.Storage = storage
		cfg.TolerableFailures = tolerable
		cfg.OnFailure = func(id int64, err error) { c.say("checkpoint %d failed: %v", id, err) }
	}
	return nil
}

// say writes a line about the job's checkpoints, restores and restarts to
// stderr.
func (c *checkpointFlags) say(format string, args ...any) {
	if c.stderr != nil {
		fmt.Fprintf(c.stderr, "weir: "+format+"\n", args...)
	}
}

// report sets o to say on stderr what a user must know: each failed
// attempt with its cause and what follows, each restore, and what the
// sinks did about it.
func (c *checkpointFlags) report(o *streaming.Options) {
	restored := false
	o.Stream.OnAttemptFailure = func(f stream.AttemptFailure) {
		if !f.Restart {
			return // the job's error says it
		}
		from := "from the start (no checkpoint completed)"
		if f.Restore != "" {
			from = "from " + f.Restore
		}
		restored = true
		c.say("attempt %d failed: %v; restarting in %v %s", f.Attempt, f.Err, f.Delay.Round(time.Millisecond), from)
	}
	o.Stream.OnRestore = func(r stream.RestoreInfo) {
		switch {
		case r.Finished:
			c.say("the job already finished at checkpoint %d (%s): nothing left to do", r.ID, r.Where)
		case !restored:
			c.say("restoring checkpoint %d from %s", r.ID, r.Where)
		}
	}
	o.Notice = func(msg string) { c.say("%s", msg) }
}

// setStateBackend sets the state backend --state-backend names on o.
func setStateBackend(name string, o *stream.Options) error {
	switch name {
	case "heap":
		return nil
	case "disk":
		o.StateBackend = stream.DiskBackend
		return nil
	}
	return &usageError{err: fmt.Errorf("--state-backend must be heap or disk, got %q", name)}
}

// savepointStop is the stop-with-savepoint of a job run with
// --savepoint-dir: SIGTERM (Terminator) calls stop, which stops the job
// once it started; path is the savepoint written.
type savepointStop struct {
	dir string

	mu      sync.Mutex
	job     *stream.Job
	path    string
	err     error
	pending bool          // SIGTERM came before the job started
	ran     chan struct{} // closed when a stop returned; nil before one
}

// started records the job's handle.
func (s *savepointStop) started(ctx context.Context, j *stream.Job) {
	s.mu.Lock()
	s.job = j
	pending := s.pending
	if pending {
		s.ran = make(chan struct{})
	}
	s.mu.Unlock()
	if pending {
		go s.run(ctx)
	}
}

// stop stops the job with a savepoint, or once it started.
func (s *savepointStop) stop(ctx context.Context) {
	s.mu.Lock()
	if s.job == nil {
		s.pending = true
		s.mu.Unlock()
		return
	}
	s.ran = make(chan struct{})
	s.mu.Unlock()
	go s.run(ctx)
}

func (s *savepointStop) run(ctx context.Context) {
	s.mu.Lock()
	j := s.job
	s.mu.Unlock()
	path, err := j.StopWithSavepoint(ctx, s.dir)
	if err != nil {
		j.Cancel()
	}
	s.mu.Lock()
	s.path, s.err = path, err
	close(s.ran)
	s.mu.Unlock()
}

// result waits for a stop that began and returns the savepoint's path,
// or why the stop failed ("" and nil when there was no stop).
func (s *savepointStop) result() (string, error) {
	s.mu.Lock()
	ran := s.ran
	s.mu.Unlock()
	if ran != nil {
		<-ran
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.path, s.err
}

// openStorage opens the checkpoint storage at dir: a directory, or an
// s3://bucket/prefix URL (reached as the AWS environment variables say).
func openStorage(dir string, opts checkpoint.DirOptions) (*checkpoint.Dir, error) {
	if !s3.IsURL(dir) {
		return checkpoint.OpenDir(dir, opts)
	}
	b, prefix, err := openBucket(dir)
	if err != nil {
		return nil, err
	}
	return checkpoint.OpenBucket(b, prefix, opts)
}

// loadSnapshot reads the checkpoint or savepoint at path: a directory, a
// _metadata file, or their s3:// URL.
func loadSnapshot(path string) (*checkpoint.Snapshot, error) {
	if !s3.IsURL(path) {
		return checkpoint.Load(path)
	}
	b, key, err := openBucket(path)
	if err != nil {
		return nil, err
	}
	return checkpoint.LoadBucket(b, key)
}

// inspectSnapshot inspects the checkpoint or savepoint at path: a
// directory, a _metadata file, or their s3:// URL.
func inspectSnapshot(path string) (*checkpoint.Info, error) {
	if !s3.IsURL(path) {
		return checkpoint.Inspect(path)
	}
	b, key, err := openBucket(path)
	if err != nil {
		return nil, err
	}
	return checkpoint.InspectBucket(b, key)
}

// openBucket opens the bucket of an s3:// URL and returns the key prefix
// the URL names in it.
func openBucket(url string) (*s3.Bucket, string, error) {
	name, prefix, err := s3.ParseURL(url)
	if err != nil {
		return nil, "", err
	}
	b, err := s3.Open(context.Background(), s3.ConfigFromEnv(), name)
	if err != nil {
		return nil, "", err
	}
	return b, prefix, nil
}
