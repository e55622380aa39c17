package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/weirdata/weir/clock"
	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/stream/checkpoint"
	"github.com/weirdata/weir/stream/internal/coordinator"
	"github.com/weirdata/weir/stream/internal/graph"
	"github.com/weirdata/weir/stream/internal/protocol"
	"github.com/weirdata/weir/stream/source"
)

// Config is what a job runs with.
type Config struct {
	Program *graph.Program
	// Graph is how the program resolves (Job is set by Start).
	Graph graph.Options
	// Flow is how its attempts run.
	Flow flow.Options
	// Checkpoints configures the coordinator; nil without checkpoints.
	Checkpoints *coordinator.Config
	// Restore, when set, is the snapshot the job opens from when its
	// checkpoint storage has none.
	Restore               *checkpoint.Snapshot
	AllowNonRestoredState bool
	Restart               RestartStrategy
	Clock                 clock.Clock
	// OnAttemptFailure hears each failed attempt, before its restart or
	// the job's end; OnRestore each restore, before its attempt starts.
	OnAttemptFailure func(AttemptFailure)
	OnRestore        func(RestoreInfo)
	// Fingerprint names the job in its checkpoints: a restore from the
	// storage refuses another job's unless AllowNonRestoredState.
	Fingerprint string
	// ID, when set, is the job's id (else a new one); Spread, when set,
	// runs this process's part of a job spread over several, which all
	// start with the same ID, program and options, and no restarts.
	ID     string
	Spread *Spread
}

// AttemptFailure is a failed attempt (stream.AttemptFailure).
type AttemptFailure struct {
	Attempt int
	Err     error
	Restart bool
	Delay   time.Duration
	Restore string
	Reason  string
}

// RestoreInfo is a restore (stream.RestoreInfo).
type RestoreInfo struct {
	ID       int64
	Where    string
	Finished bool
}

// IsUnrecoverable reports whether err, or an error it wraps, has a method
// Unrecoverable() bool that returns true: no restart can cure it.
func IsUnrecoverable(err error) bool {
	var u interface{ Unrecoverable() bool }
	return errors.As(err, &u) && u.Unrecoverable()
}

// unrecoverable marks an error no restart can cure.
type unrecoverable struct{ error }

func (e unrecoverable) Unwrap() error       { return e.error }
func (e unrecoverable) Unrecoverable() bool { return true }

// Job is a running job: its attempts, one at a time. Its methods are safe
// for concurrent use.
type Job struct {
	cfg   Config
	id    string
	clock clock.Clock
	hist  *coordinator.History
	ctx   context.Context // ends with Cancel
	stop  context.CancelFunc
	done  chan struct{}

	// floor is the id of the storage's latest checkpoint when the job
	// started from an explicit snapshot (Config.Restore): the storage's
	// checkpoints up to it are another run's, and restarts restore only
	// the ones this job stored after it.
	floor int64

	mu       sync.Mutex
	attempt  int
	cur      *flow.Job
	coord    *coordinator.Coordinator
	coordEnd chan struct{} // closed when the attempt's coordinator returned
	stopped  bool          // stopped with a savepoint: the job ends Finished
	sr       *spreadRun    // the part of a spread job, nil in one process
	tr       flow.Transport
	status   flow.Status
	res      *flow.Result
	err      error
}

// NewID returns a new job id: 32 hex digits, as Flink's JobID.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Start starts the job's first attempt and the goroutine that restarts
// failed ones.
func Start(ctx context.Context, cfg Config) (*Job, error) {
	j := &Job{cfg: cfg, id: cfg.ID, clock: cfg.Clock, hist: &coordinator.History{}, done: make(chan struct{})}
	if j.id == "" {
		j.id = NewID()
	}
	if j.clock == nil {
		j.clock = clock.System{}
	}
	j.cfg.Graph.Job = j.id
	if s := cfg.Spread; s != nil {
		j.sr = newSpreadRun(j, s)
		j.cfg.Graph.Codecs, j.cfg.Graph.Here = true, s.Here
		if s.Part != 0 {
			j.cfg.Graph.Splits = func(id string) source.Enumerator { return remoteSplits{sr: j.sr, id: id} }
			j.cfg.Graph.Aligners = func(id string, interval time.Duration) graph.Aligner {
				return remoteAligner{sr: j.sr, id: id, interval: interval}
			}
		}
	}
	j.ctx, j.stop = context.WithCancel(ctx)
	if cfg.Restore != nil && cfg.Checkpoints != nil {
		// an explicit savepoint wins over the checkpoint storage's latest
		// checkpoint, which is another run's; this job's ids follow both
		s, _, err := cfg.Checkpoints.Storage.Latest()
		if err != nil {
			j.stop()
			return nil, fmt.Errorf("stream: restore: %w", err)
		}
		j.floor = -1
		if s != nil {
			j.floor = s.ID
			j.hist.Continue(s.ID)
		}
	}
	snap, where, err := j.latest()
	if err != nil {
		j.stop()
		return nil, err
	}
	if snap != nil {
		j.hist.Continue(snap.ID)
		if f := cfg.OnRestore; f != nil {
			f(RestoreInfo{ID: snap.ID, Where: where, Finished: snap.Finished})
		}
		if snap.Finished { // FLIP-147: the job ended before; nothing is left to do but commit
			if j.sr != nil && cfg.Spread.Part != 0 { // part 0 commits every part's
				snap = &checkpoint.Snapshot{}
			}
			if err := j.commitFinal(snap); err != nil {
				j.stop()
				return nil, err
			}
			j.status, j.res = flow.Finished, &flow.Result{}
			j.stop()
			close(j.done)
			return j, nil
		}
	}
	if err := j.run(snap, where); err != nil {
		if j.sr != nil && j.sr.l != nil {
			j.sr.setReady() // a message waiting in handle goes, and the link closes
			j.sr.l.Close()
		}
		j.stop()
		return nil, err
	}
	if j.sr != nil && cfg.Spread.Part != 0 {
		go j.superviseMember()
		return j, nil
	}
	go j.supervise()
	return j, nil
}

// openSpread opens the link of a spread job's part.
func (j *Job) openSpread() error {
	s := j.cfg.Spread
	t, err := s.Transport(s.part)
	if err != nil {
		return fmt.Errorf("stream: %w", err)
	}
	if t == nil {
		return errors.New("stream: the Spread's Transport returned none")
	}
	j.tr = t
	// the link outlives Cancel: a part still reports its end and hears the
	// job's; finish closes it
	l, err := openLink(context.Background(), s, t, j.sr.handle, j.sr.fail)
	if err != nil {
		return err
	}
	j.sr.l = l
	return nil
}

// ID returns the job's id.
func (j *Job) ID() string { return j.id }

// latest returns the snapshot an attempt restores from: the storage's
// latest checkpoint, else Config.Restore. A job started from Config.Restore
// takes the storage's latest only once it is one this job stored.
func (j *Job) latest() (*checkpoint.Snapshot, string, error) {
	if c := j.cfg.Checkpoints; c != nil {
		s, where, err := c.Storage.Latest()
		if err != nil {
			return nil, "", fmt.Errorf("stream: restore: %w", err)
		}
		if s != nil && (j.floor == 0 || s.ID > j.floor) {
			if s.Fingerprint != "" && s.Fingerprint != j.cfg.Fingerprint && !j.cfg.AllowNonRestoredState {
				return nil, "", unrecoverable{fmt.Errorf("stream: restore: %s is a checkpoint of another job (fingerprint %s, this job's %s): "+
					"a checkpoint storage serves one job; allowing non-restored state (--allow-non-restored-state) restores what maps", where, s.Fingerprint, j.cfg.Fingerprint)}
			}
			return s, where, nil
		}
	}
	if s := j.cfg.Restore; s != nil {
		return s, fmt.Sprintf("%s %d", s.Kind, s.ID), nil
	}
	return nil, "", nil
}

// run starts an attempt, restored from snap when it is not nil, with its
// checkpoint coordinator.
func (j *Job) run(snap *checkpoint.Snapshot, where string) error {
	r, err := graph.Resolve(j.cfg.Program, j.cfg.Graph)
	if err != nil {
		return err
	}
	var assign *coordinator.Assignment
	if snap != nil {
		if assign, err = coordinator.Assign(snap, where, r.Topology, j.cfg.AllowNonRestoredState); err != nil {
			return err
		}
		r.Restored(assign)
	}
	if j.sr != nil {
		if err := j.openSpread(); err != nil {
			return err
		}
	}
	j.mu.Lock()
	j.attempt++
	number := j.attempt
	j.mu.Unlock()
	var coord *coordinator.Coordinator
	checkpointing := j.cfg.Checkpoints != nil && !r.Batch
	member := j.sr != nil && j.cfg.Spread.Part != 0
	if checkpointing && !member {
		// the coordinator knows the topology's valves once Translate made
		// them; tasks register only once the flow job started
		coord = coordinator.New(r.Topology, *j.cfg.Checkpoints, j.hist, snap != nil)
	}
	var gw protocol.Coordinator
	if coord != nil {
		gw = coord
	}
	if checkpointing && member {
		gw = j.sr
	}
	tj, err := graph.Translate(r, assign, gw, number)
	if err != nil {
		return err
	}
	fo := j.cfg.Flow
	fo.Streaming = !r.Batch
	if sr := j.sr; sr != nil {
		fo.Remote = &flow.Remote{Here: func(_, i int) bool { return sr.s.Here(i) }, Transport: j.tr}
		sr.mu.Lock()
		sr.coord, sr.enums, sr.aligners, sr.attempt = coord, tj.Enumerators, tj.Aligners, number
		sr.mu.Unlock()
		sr.setReady() // the messages of the other parts are handled from now on
	}
	fj, err := flow.Start(j.ctx, tj.Graph, fo)
	if err != nil {
		return err
	}
	if coord != nil {
		coord.SetCancel(fj.Cancel)
	}
	end := make(chan struct{})
	j.mu.Lock()
	j.cur, j.coord, j.coordEnd = fj, coord, end
	j.mu.Unlock()
	if coord == nil {
		close(end)
		return nil
	}
	cctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-fj.Done()
		if j.sr != nil { // the other parts' tasks may still run
			<-j.sr.others
		}
		cancel()
	}()
	go func() {
		defer close(end)
		coord.Run(cctx)
	}()
	return nil
}

// supervise waits for each attempt and restarts failed ones as the
// restart strategy says, reporting each failure.
func (j *Job) supervise() {
	r := newRestarter(j.cfg.Restart, j.cfg.Checkpoints != nil)
	for attempt := 1; ; attempt++ {
		j.mu.Lock()
		fj, end, coord := j.cur, j.coordEnd, j.coord
		j.mu.Unlock()
		started := j.clock.Now()
		res, err := fj.Wait()
		if j.sr != nil && fj.Status() != flow.Finished {
			j.mu.Lock()
			stopped := j.stopped
			j.mu.Unlock()
			if !stopped { // end the other parts' tasks too
				st := fj.Status()
				if ferr := j.sr.failed(); ferr != nil {
					err, st = ferr, flow.Failed
				}
				j.sr.tell(st, err)
			}
		}
		<-end
		var cerr error // the coordinator failed the attempt
		if coord != nil {
			cerr = coord.Failure()
		}
		if j.sr != nil {
			<-j.sr.others
			if serr := j.sr.failed(); serr != nil && cerr == nil {
				cerr = serr
			}
		}
		if cerr != nil {
			err = cerr
		}
		if err == nil && j.cfg.Checkpoints != nil && fj.Status() == flow.Finished {
			err = j.storeFinished()
		}
		j.mu.Lock()
		stopped := j.stopped
		j.mu.Unlock()
		if stopped {
			j.finish(res, nil, flow.Finished)
			return
		}
		if err == nil || cerr == nil && fj.Status() == flow.Canceled || j.ctx.Err() != nil {
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
		if cb := j.cfg.OnAttemptFailure; cb != nil {
			cb(f)
		}
		if !ok {
			if attempt > 1 || r.s.Kind != RestartNone {
				err = fmt.Errorf("stream: attempt %d failed and %s: %w", attempt, f.Reason, err)
			}
			j.finish(res, err, flow.Failed)
			return
		}
		if delay > 0 {
			t := j.clock.Timer(j.clock.Now().Add(delay))
			select {
			case <-t.C():
			case <-j.ctx.Done():
			}
			t.Stop()
		}
		if j.ctx.Err() != nil {
			j.finish(res, fmt.Errorf("flow: job canceled: %w", context.Canceled), flow.Canceled)
			return
		}
		j.hist.Restarted()
		if snap != nil && j.cfg.OnRestore != nil {
			j.cfg.OnRestore(RestoreInfo{ID: snap.ID, Where: f.Restore, Finished: snap.Finished})
		}
		if lerr := j.run(snap, f.Restore); lerr != nil {
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
	id := j.hist.NextID()
	snap := &checkpoint.Snapshot{ID: id, Kind: checkpoint.Checkpoint, Timestamp: j.clock.Now().UnixMilli(), Finished: true,
		Fingerprint: j.cfg.Fingerprint}
	var commits []func() error
	p := j.cfg.Program
	ids := graph.OperatorIDs(p)
	for _, n := range p.Nodes {
		if n.Finalize == nil {
			continue
		}
		b, commit, err := n.Finalize()
		if err != nil {
			return fmt.Errorf("stream: final checkpoint %d: %s: %w", id, n.Name, err)
		}
		var states [][]byte
		if b != nil {
			states = append(states, b)
			commits = append(commits, commit)
		}
		if j.sr != nil { // the other parts' sinks are committed here
			for _, rb := range j.sr.remoteFinals(ids[n]) {
				states = append(states, rb)
				commits = append(commits, func() error { return n.CommitFinal(rb) })
			}
		}
		if len(states) > 0 {
			op := checkpoint.OperatorState{ID: ids[n], Name: n.Name, Kind: n.Kind, Parallelism: len(states)}
			for _, st := range states {
				op.Subtasks = append(op.Subtasks, checkpoint.SubtaskState{State: st, Watermark: math.MinInt64})
			}
			snap.Operators = append(snap.Operators, op)
		}
	}
	path, err := j.cfg.Checkpoints.Storage.Store(snap)
	if err != nil {
		return fmt.Errorf("stream: final checkpoint %d: %w", id, err)
	}
	if gate := j.cfg.Checkpoints.Gate; gate != nil {
		if err := gate(j.ctx, id, path); err != nil {
			return fmt.Errorf("stream: final checkpoint %d: the completion gate refused it: %w", id, err)
		}
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
func (j *Job) commitFinal(snap *checkpoint.Snapshot) error {
	p := j.cfg.Program
	ids := graph.OperatorIDs(p)
	for _, n := range p.Nodes {
		if n.CommitFinal == nil {
			continue
		}
		op := snap.Operator(ids[n])
		if op == nil {
			continue
		}
		for _, st := range op.Subtasks {
			if err := n.CommitFinal(st.State); err != nil {
				return fmt.Errorf("stream: restore of the finished job: %w", err)
			}
		}
	}
	return nil
}

func (j *Job) finish(res *flow.Result, err error, status flow.Status) {
	if err != nil && status == flow.Finished {
		status = flow.Failed
	}
	if j.sr != nil {
		j.sr.finish(status, err)
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
	cur := j.cur
	j.mu.Unlock()
	if cur != nil {
		cur.Cancel()
	}
	j.stop()
}

// Wait waits for the job's end and returns the last attempt's metrics and
// the job's error.
func (j *Job) Wait() (*flow.Result, error) {
	<-j.done
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.res, j.err
}

// Current returns the current attempt's flow job (nil before the first).
func (j *Job) Current() *flow.Job {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.cur
}

// Coordinator returns the current attempt's checkpoint coordinator (nil
// without checkpoints).
func (j *Job) Coordinator() *coordinator.Coordinator {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.coord
}

// History returns the job's checkpoint history.
func (j *Job) History() *coordinator.History { return j.hist }

// TriggerCheckpoint triggers a checkpoint now (Flink's manual checkpoint
// trigger), once every task of the current attempt runs, and waits until
// it completed; it returns its id, or why it was aborted.
func (j *Job) TriggerCheckpoint(ctx context.Context) (int64, error) {
	j.mu.Lock()
	c := j.coord
	j.mu.Unlock()
	if c == nil {
		if err := j.memberErr(); err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("stream: the job does not checkpoint: call EnableCheckpointing")
	}
	select {
	case r := <-c.Request():
		return r.ID, r.Err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// TriggerSavepoint writes a savepoint into dir while the job runs on
// (Flink's triggerSavepoint); see stream.Job.TriggerSavepoint.
func (j *Job) TriggerSavepoint(ctx context.Context, dir string) (string, error) {
	if dir == "" {
		return "", errors.New("stream: savepoint: no savepoint directory")
	}
	j.mu.Lock()
	c := j.coord
	j.mu.Unlock()
	if c == nil {
		if err := j.memberErr(); err != nil {
			return "", fmt.Errorf("stream: savepoint: %w", err)
		}
		return "", errors.New("stream: savepoint: the job does not checkpoint: call EnableCheckpointing")
	}
	select {
	case r := <-c.RequestSavepoint(dir, false):
		if r.Err != nil {
			return "", fmt.Errorf("stream: savepoint: %w", r.Err)
		}
		return r.Path, nil
	case <-j.done:
		return "", errors.New("stream: savepoint: the job ended first")
	case <-ctx.Done():
		return "", fmt.Errorf("stream: savepoint: %w", ctx.Err())
	}
}

// StopWithSavepoint stops the job with a savepoint into dir (Flink's
// stopWithSavepoint); see stream.Job.StopWithSavepoint.
func (j *Job) StopWithSavepoint(ctx context.Context, dir string) (string, error) {
	if dir == "" {
		return "", errors.New("stream: stop with savepoint: no savepoint directory")
	}
	j.mu.Lock()
	c := j.coord
	j.mu.Unlock()
	if c == nil {
		if err := j.memberErr(); err != nil {
			return "", fmt.Errorf("stream: stop with savepoint: %w", err)
		}
		return "", errors.New("stream: stop with savepoint: the job does not checkpoint: call EnableCheckpointing")
	}
	var r coordinator.SavepointResult
	select {
	case r = <-c.RequestSavepoint(dir, true):
	case <-j.done:
		return "", errors.New("stream: stop with savepoint: the job ended first")
	case <-ctx.Done():
		return "", fmt.Errorf("stream: stop with savepoint: %w", ctx.Err())
	}
	if r.Err != nil {
		return "", fmt.Errorf("stream: stop with savepoint: %w", r.Err)
	}
	select {
	case <-r.Notified:
	case <-j.done:
	case <-ctx.Done():
		return r.Path, fmt.Errorf("stream: stop with savepoint %s: %w", r.Path, ctx.Err())
	}
	j.mu.Lock()
	j.stopped = true
	j.mu.Unlock()
	if j.sr != nil { // the other parts stop too
		for p := 1; p < len(j.cfg.Spread.Slots); p++ {
			j.sr.l.Send(p, (&msg{Kind: wireStop}).encode())
		}
	}
	j.Cancel()
	<-j.done
	return r.Path, nil
}

// memberErr says why a part other than 0 of a spread job takes no
// checkpoint or savepoint requests; nil for any other job.
func (j *Job) memberErr() error {
	if s := j.cfg.Spread; s != nil && s.Part != 0 {
		return fmt.Errorf("the checkpoints of a spread job are coordinated by its part 0, not part %d", s.Part)
	}
	return nil
}
