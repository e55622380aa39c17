package coordinator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/weirdata/weir/clock"
	"github.com/weirdata/weir/stream/checkpoint"
	"github.com/weirdata/weir/stream/internal/protocol"
)

// Config configures a Coordinator.
type Config struct {
	Interval      time.Duration
	Timeout       time.Duration
	MinPause      time.Duration
	MaxConcurrent int
	Storage       checkpoint.Storage
	// Clock is the job's clock (trigger times, intervals, timeouts).
	Clock clock.Clock
	// TolerableFailures is how many checkpoints may fail in a row before
	// the coordinator fails the attempt (Flink's
	// tolerableCheckpointFailureNumber); negative tolerates any number.
	TolerableFailures int
	// OnFailure, when set, hears each checkpoint that failed and why, from
	// the coordinator's goroutine.
	OnFailure func(id int64, err error)
	// Fingerprint is stored in every snapshot: the job it belongs to.
	Fingerprint string
	// Gate, when set, is called with each checkpoint stored, before it
	// counts as complete: before the tasks hear Complete (sinks commit
	// then). An error aborts the checkpoint and fails the attempt.
	Gate func(ctx context.Context, id int64, path string) error
}

// ErrAborted is wrapped by the error of a checkpoint that did not
// complete.
var ErrAborted = errors.New("stream: checkpoint aborted")

// Stats is one completed checkpoint (stream.CheckpointStats).
type Stats struct {
	ID        int64
	Triggered time.Time
	Duration  time.Duration
	Size      int64
	FullSize  int64
	Alignment time.Duration
	Path      string
	InFlight  int64
}

// History is what a job keeps across its attempts: the next checkpoint id,
// the completed checkpoints' statistics, the restores' durations and the
// number of restarts.
type History struct {
	mu          sync.Mutex
	next        int64
	failedInRow int   // checkpoints failed since the last that completed
	failed      int   // checkpoints failed, savepoints not counted
	lastDone    int64 // the newest checkpoint completed
	stats       []Stats
	restores    []time.Duration
	restarts    int
}

// NextID returns the next checkpoint id.
func (h *History) NextID() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.next++
	return h.next
}

// Continue makes the next id follow id (a restored checkpoint's).
func (h *History) Continue(id int64) {
	h.mu.Lock()
	h.next = max(h.next, id)
	h.mu.Unlock()
}

// Restarted counts a restart.
func (h *History) Restarted() {
	h.mu.Lock()
	h.restarts++
	h.mu.Unlock()
}

// Read returns copies of what the history holds.
func (h *History) Read() (stats []Stats, restores []time.Duration, restarts int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Stats(nil), h.stats...), append([]time.Duration(nil), h.restores...), h.restarts
}

// Failed returns how many checkpoints failed (Flink's
// numberOfFailedCheckpoints); a savepoint's failure is not counted.
func (h *History) Failed() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.failed
}

// Result is the end of a requested checkpoint: its id, or why it was
// aborted.
type Result struct {
	ID  int64
	Err error
}

// SavepointResult is a completed savepoint (its path, and Notified,
// closed once every running task was notified of the completion of a
// stop-with-savepoint; at once for a savepoint the job runs on after), or
// why it was aborted.
type SavepointResult struct {
	Path     string
	Notified <-chan struct{}
	Err      error
}

// savepointRequest is a savepoint into dir. With stop, the sources read
// nothing after its barrier and its completion is notified, so that the
// sinks commit what it covers; without, the job runs on and the
// completion is not notified (Flink's intermediate savepoint: a failover
// restores the last checkpoint, so a sink must not commit past it).
type savepointRequest struct {
	dir  string
	stop bool
	res  chan SavepointResult
}

// taskKey names a subtask of the attempt.
type taskKey struct {
	vertex  string
	subtask int
}

// subtaskSnapshot is one subtask's snapshot of one operator.
type subtaskSnapshot struct {
	state     []byte
	shared    []string
	watermark int64
}

// pending is a checkpoint triggered and not complete.
type pending struct {
	id        int64
	at        time.Time // on the job's clock
	acked     map[taskKey]bool
	finished  map[taskKey]bool // acknowledged by finishing (FLIP-147)
	states    map[string][]subtaskSnapshot
	inflight  map[string][][]byte // channel state, by task and subtask
	coord     map[string][]byte   // enumerator states, by source operator
	alignment time.Duration
	waiters   []chan Result
	savepoint *savepointRequest // nil: a checkpoint
}

// Coordinator is a job attempt's checkpoint coordinator (Flink's
// CheckpointCoordinator). Its goroutine (Run) triggers checkpoint n every
// Interval of the job's clock, when the attempt's tasks all run, no more
// than MaxConcurrent are pending and MinPause passed since the last
// completed: it snapshots the source enumerators (their valves closed) and
// sends a Trigger to every source subtask. Tasks acknowledge with their
// operators' snapshots; once all did, the same goroutine stores the
// checkpoint (never a task's goroutine) and then sends Complete to every
// task. A checkpoint not complete within Timeout is aborted, and so are the
// pending ones when the attempt ends.
//
// Checkpoints go on after tasks finished (Flink's FLIP-147): a finished
// task is not triggered and counts as acknowledged, with no state, for the
// checkpoints pending when it finished and every later one; the operators
// of a task all of whose subtasks finished are recorded as finished in the
// snapshot, and a restore does not run them again.
type Coordinator struct {
	cfg    Config
	topo   *Topology
	hist   *History
	expect int

	mu        sync.Mutex
	tasks     map[taskKey]protocol.Task
	sources   []taskKey
	done      map[taskKey]bool // tasks that finished
	pending   map[int64]*pending
	completed []*pending // acknowledged by all, to store
	requests  []chan Result
	savepoint *savepointRequest // requested, not yet triggered
	stopping  bool              // a stop-with-savepoint is in progress
	confirms  map[int64]*confirmation
	lastEnd   time.Time
	started   time.Time // the attempt's start, for the restore time
	restoring bool
	ended     bool // the attempt ended: aborts are not failures
	kick      chan struct{}
	// failures are the checkpoints failed and not yet reported; lastDone
	// is the newest completed checkpoint, before which a failure counts no
	// more.
	failures []failure
	lastDone int64
	// cancel cancels the attempt; failed is why the coordinator did (too
	// many failed checkpoints in a row)
	cancel func()
	failed error
	// runCtx is Run's context, which Gate calls get.
	runCtx context.Context
}

// failure is a checkpoint that failed; a savepoint's failure is returned
// to the stop that asked for it and not counted.
type failure struct {
	id        int64
	savepoint bool
	err       error
}

// confirmation counts the tasks still to confirm that they were notified
// of a completed savepoint.
type confirmation struct {
	left map[taskKey]bool
	ch   chan struct{}
}

// New returns the coordinator of an attempt of topology topo;
// restoring says the attempt restores from a snapshot (its restore time
// goes into the history once every task runs).
func New(topo *Topology, cfg Config, hist *History, restoring bool) *Coordinator {
	if cfg.Clock == nil {
		cfg.Clock = clock.System{}
	}
	c := &Coordinator{cfg: cfg, topo: topo, hist: hist,
		tasks: map[taskKey]protocol.Task{}, done: map[taskKey]bool{}, pending: map[int64]*pending{},
		confirms: map[int64]*confirmation{}, kick: make(chan struct{}, 1), started: cfg.Clock.Now(), restoring: restoring}
	for _, t := range topo.Tasks {
		c.expect += t.Parallelism
	}
	return c
}

func (c *Coordinator) wake() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// ours says whether a message of task id belongs to this attempt.
func (c *Coordinator) ours(id protocol.TaskID) bool {
	return id.Job == c.topo.Job && id.Attempt == c.topo.Attempt && c.topo.task(id.Vertex) != nil
}

// Register adds a running task.
func (c *Coordinator) Register(id protocol.TaskID, t protocol.Task) {
	if !c.ours(id) {
		return
	}
	k := taskKey{id.Vertex, id.Subtask}
	c.mu.Lock()
	c.tasks[k] = t
	if c.topo.task(id.Vertex).Source {
		c.sources = append(c.sources, k)
	}
	if len(c.tasks) == c.expect && c.restoring {
		c.restoring = false
		c.hist.mu.Lock()
		c.hist.restores = append(c.hist.restores, c.cfg.Clock.Now().Sub(c.started))
		c.hist.mu.Unlock()
	}
	c.mu.Unlock()
	c.wake()
}

// Finish records that a task's input ended and it returned: it
// acknowledges, finished, the checkpoints pending that it did not, and is
// not triggered any more. Its consumers saw its end before any later
// barrier, so their snapshots hold the effect of all its output.
func (c *Coordinator) Finish(f protocol.Finished) {
	if !c.ours(f.Task) {
		return
	}
	k := taskKey{f.Task.Vertex, f.Task.Subtask}
	c.mu.Lock()
	c.done[k] = true
	for id, pc := range c.pending {
		if !pc.acked[k] {
			pc.acked[k], pc.finished[k] = true, true
			c.completeLocked(id, pc)
		}
	}
	for id := range c.confirms {
		c.confirmLocked(id, k)
	}
	c.mu.Unlock()
	c.wake()
}

// InputsEnded makes a running task whose inputs ended (an iteration
// head) one the coordinator triggers, as a source: with the checkpoints
// pending that it did not acknowledge, whose barriers will not reach it,
// and every later one.
func (c *Coordinator) InputsEnded(e protocol.InputsEnded) {
	if !c.ours(e.Task) {
		return
	}
	k := taskKey{e.Task.Vertex, e.Task.Subtask}
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.tasks[k]
	if t == nil || c.done[k] || slices.Contains(c.sources, k) {
		return
	}
	c.sources = append(c.sources, k)
	ids := make([]int64, 0, len(c.pending))
	for id, pc := range c.pending {
		if !pc.acked[k] {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		pc := c.pending[id]
		t.Deliver(protocol.Trigger{Checkpoint: id, Timestamp: pc.at.UnixMilli(), Savepoint: pc.savepoint != nil})
	}
}

// completeLocked moves pc to the completed ones once every task
// acknowledged it; c.mu is held.
func (c *Coordinator) completeLocked(id int64, pc *pending) {
	if len(pc.acked) == c.expect {
		delete(c.pending, id)
		c.completed = append(c.completed, pc)
		c.wake()
	}
}

// Acknowledge records a task's snapshots for a checkpoint; a source's
// opens its valves.
func (c *Coordinator) Acknowledge(a protocol.Ack) {
	if !c.ours(a.Task) {
		return
	}
	k := taskKey{a.Task.Vertex, a.Task.Subtask}
	c.openValves(a.Task)
	c.mu.Lock()
	defer c.mu.Unlock()
	pc := c.pending[a.Checkpoint]
	if pc == nil || pc.acked[k] {
		return // aborted
	}
	pc.acked[k] = true
	pc.alignment = max(pc.alignment, a.Alignment)
	for _, op := range a.Operators {
		o := c.topo.operator(op.ID)
		if o == nil {
			continue
		}
		s := pc.states[op.ID]
		if s == nil {
			s = make([]subtaskSnapshot, o.Parallelism)
			for i := range s {
				s[i].watermark = math.MinInt64
			}
			pc.states[op.ID] = s
		}
		if a.Task.Subtask < len(s) {
			s[a.Task.Subtask] = subtaskSnapshot{state: op.State, shared: op.Shared, watermark: op.Watermark}
		}
	}
	if len(a.InFlight) > 0 {
		t := c.topo.task(a.Task.Vertex)
		s := pc.inflight[t.Vertex]
		if s == nil {
			s = make([][]byte, t.Parallelism)
			pc.inflight[t.Vertex] = s
		}
		s[a.Task.Subtask] = a.InFlight
	}
	c.completeLocked(a.Checkpoint, pc)
}

// openValves opens the valves of a source task's subtask.
func (c *Coordinator) openValves(id protocol.TaskID) {
	t := c.topo.task(id.Vertex)
	if t == nil || !t.Source {
		return
	}
	for _, op := range t.Operators {
		if o := c.topo.operator(op); o != nil && o.Valve != nil {
			o.Valve.open(id.Subtask)
		}
	}
}

// Decline aborts a checkpoint a task's part of which failed (Flink's
// declineCheckpoint).
func (c *Coordinator) Decline(d protocol.Decline) {
	if !c.ours(d.Task) {
		return
	}
	c.openValves(d.Task)
	k := taskKey{d.Task.Vertex, d.Task.Subtask}
	c.mu.Lock()
	defer c.mu.Unlock()
	if pc := c.pending[d.Checkpoint]; pc == nil || pc.acked[k] {
		return
	}
	name := c.topo.task(d.Task.Vertex).Name
	c.abortLocked(d.Checkpoint, fmt.Errorf("%w: checkpoint %d declined by %s subtask %d: %s", ErrAborted, d.Checkpoint, name, d.Task.Subtask, d.Reason))
}

// Notified records that a task's operators were notified of a completed
// savepoint.
func (c *Coordinator) Notified(n protocol.Notified) {
	if !c.ours(n.Task) {
		return
	}
	c.mu.Lock()
	c.confirmLocked(n.Checkpoint, taskKey{n.Task.Vertex, n.Task.Subtask})
	c.mu.Unlock()
}

func (c *Coordinator) confirmLocked(id int64, k taskKey) {
	cf := c.confirms[id]
	if cf == nil || !cf.left[k] {
		return
	}
	delete(cf.left, k)
	if len(cf.left) == 0 {
		close(cf.ch)
		delete(c.confirms, id)
	}
}

// Pending returns the ids of the checkpoints in progress.
func (c *Coordinator) Pending() []int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	ids := make([]int64, 0, len(c.pending))
	for id := range c.pending {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Request asks for a checkpoint now; the result says when it completed.
func (c *Coordinator) Request() <-chan Result {
	ch := make(chan Result, 1)
	c.mu.Lock()
	c.requests = append(c.requests, ch)
	c.mu.Unlock()
	c.wake()
	return ch
}

// RequestSavepoint asks for a savepoint into dir: a stop-with-savepoint
// with stop, else one the job runs on after.
func (c *Coordinator) RequestSavepoint(dir string, stop bool) <-chan SavepointResult {
	r := &savepointRequest{dir: dir, stop: stop, res: make(chan SavepointResult, 1)}
	c.mu.Lock()
	if c.savepoint != nil || c.stopping {
		c.mu.Unlock()
		r.res <- SavepointResult{Err: errors.New("a savepoint is in progress already")}
		return r.res
	}
	c.savepoint = r
	c.mu.Unlock()
	c.wake()
	return r.res
}

// abortLocked drops pending checkpoint id; c.mu is held. The sources of an
// aborted stop-with-savepoint read on.
func (c *Coordinator) abortLocked(id int64, err error) {
	pc := c.pending[id]
	if pc == nil {
		return
	}
	delete(c.pending, id)
	if !c.ended {
		c.failures = append(c.failures, failure{id: id, savepoint: pc.savepoint != nil, err: err})
		c.wake()
	}
	for _, w := range pc.waiters {
		w <- Result{ID: id, Err: err}
	}
	if pc.savepoint != nil {
		c.failSavepointLocked(pc.savepoint, err)
	}
	for k, t := range c.tasks {
		if !c.done[k] {
			t.Deliver(protocol.Abort{Checkpoint: id, Reason: err.Error()})
		}
	}
}

// failSavepointLocked reports a stop-with-savepoint that failed and lets
// the sources read on; c.mu is held.
func (c *Coordinator) failSavepointLocked(r *savepointRequest, err error) {
	r.res <- SavepointResult{Err: err}
	if !r.stop {
		return
	}
	c.stopping = false
	for _, k := range c.sources {
		if !c.done[k] {
			c.tasks[k].Deliver(protocol.Resume{})
		}
	}
}

// Run is the coordinator's goroutine, until ctx ends.
func (c *Coordinator) Run(ctx context.Context) {
	c.mu.Lock()
	c.runCtx = ctx
	c.mu.Unlock()
	clk := c.cfg.Clock
	next := c.started.Add(c.cfg.Interval)
	for {
		now := clk.Now()
		c.expire(now)
		c.store()
		c.report()
		if c.due(now, next) {
			if c.trigger(now) {
				next = now.Add(c.cfg.Interval)
			}
		}
		wakeAt, ok := c.wakeAt(now, next)
		var tc <-chan time.Time
		var t clock.Timer
		if ok {
			t = clk.Timer(wakeAt)
			tc = t.C()
		}
		select {
		case <-ctx.Done():
			if t != nil {
				t.Stop()
			}
			c.shutdown()
			return
		case <-tc:
		case <-c.kick:
		}
		if t != nil {
			t.Stop()
		}
	}
}

// due says whether a checkpoint should be triggered now: the interval
// passed or one was requested.
func (c *Coordinator) due(now, next time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !now.Before(next) || len(c.requests) > 0 || c.savepoint != nil
}

// wakeAt is when the loop must look again: the next trigger, a pending
// checkpoint's timeout or the end of the min pause.
func (c *Coordinator) wakeAt(now, next time.Time) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	at, ok := time.Time{}, false
	consider := func(t time.Time) {
		if !t.After(now) {
			return
		}
		if !ok || t.Before(at) {
			at, ok = t, true
		}
	}
	consider(next)
	for _, pc := range c.pending {
		consider(pc.at.Add(c.cfg.Timeout))
	}
	if !c.lastEnd.IsZero() {
		consider(c.lastEnd.Add(c.cfg.MinPause))
	}
	return at, ok
}

// expire aborts the checkpoints past their timeout.
func (c *Coordinator) expire(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, pc := range c.pending {
		if !now.Before(pc.at.Add(c.cfg.Timeout)) {
			c.abortLocked(id, fmt.Errorf("%w: checkpoint %d expired before completing", ErrAborted, id))
		}
	}
}

// trigger starts a checkpoint when the job allows one now.
func (c *Coordinator) trigger(now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.done) == c.expect {
		for _, r := range c.requests {
			r <- Result{Err: fmt.Errorf("%w: every task of the job finished", ErrAborted)}
		}
		c.requests = nil
		if c.savepoint != nil {
			c.savepoint.res <- SavepointResult{Err: fmt.Errorf("%w: every task of the job finished", ErrAborted)}
			c.savepoint = nil
		}
		return false
	}
	if c.stopping || len(c.tasks) < c.expect || len(c.pending) >= c.cfg.MaxConcurrent {
		return false
	}
	if !c.lastEnd.IsZero() && now.Before(c.lastEnd.Add(c.cfg.MinPause)) {
		return false
	}
	id := c.hist.NextID()
	pc := &pending{id: id, at: now, acked: map[taskKey]bool{}, finished: map[taskKey]bool{},
		states: map[string][]subtaskSnapshot{}, inflight: map[string][][]byte{}, coord: map[string][]byte{},
		waiters: c.requests, savepoint: c.savepoint}
	c.requests = nil
	c.savepoint = nil
	c.stopping = pc.savepoint != nil && pc.savepoint.stop
	c.pending[id] = pc
	for k := range c.done {
		pc.acked[k], pc.finished[k] = true, true
	}
	for _, o := range c.topo.Operators {
		if o.Valve == nil {
			continue
		}
		b, err := EncodeEnumeratorState(o.Valve.snapshotAndClose())
		if err != nil {
			for i := range o.Parallelism {
				o.Valve.open(i)
			}
			c.abortLocked(id, fmt.Errorf("%w: checkpoint %d: %s: %w", ErrAborted, id, o.Name, err))
			return true
		}
		pc.coord[o.ID] = b
	}
	t := protocol.Trigger{Checkpoint: id, Timestamp: now.UnixMilli(), Savepoint: pc.savepoint != nil, Stop: c.stopping}
	for _, k := range c.sources {
		if !c.done[k] {
			c.tasks[k].Deliver(t)
		}
	}
	return true
}

// store writes the checkpoints every task acknowledged, in order, and tells
// the tasks they completed.
func (c *Coordinator) store() {
	for {
		c.mu.Lock()
		if len(c.completed) == 0 {
			c.mu.Unlock()
			return
		}
		pc := c.completed[0]
		c.completed = c.completed[1:]
		c.mu.Unlock()
		snap, inflight := c.snapshot(pc)
		var path string
		var err error
		if pc.savepoint != nil {
			snap.Kind = checkpoint.Savepoint
			if w, ok := c.cfg.Storage.(savepointWriter); ok {
				path, err = w.WriteSavepoint(pc.savepoint.dir, snap, c.openShared)
			} else {
				path, err = checkpoint.WriteSavepoint(pc.savepoint.dir, snap, c.openShared)
			}
		} else {
			path, err = c.cfg.Storage.Store(snap)
		}
		gated := false // the gate refused the checkpoint
		ended := false // the run ended while the gate was asked
		if err == nil && pc.savepoint == nil && c.cfg.Gate != nil {
			c.mu.Lock()
			ctx := c.runCtx
			c.mu.Unlock()
			if gerr := c.cfg.Gate(ctx, pc.id, path); gerr != nil {
				if ctx.Err() != nil {
					// the attempt's run is over (its input ended, or it
					// failed or was canceled): the checkpoint is aborted,
					// which neither the gate nor a failure count decided;
					// a finished job stores its final checkpoint next
					err, ended = fmt.Errorf("the run ended before the completion gate answered: %w", gerr), true
				} else {
					err, gated = fmt.Errorf("the completion gate refused it: %w", gerr), true
				}
			}
		}
		end := c.cfg.Clock.Now()
		var cancel func()
		c.mu.Lock()
		if err == nil && pc.savepoint == nil {
			c.lastDone = max(c.lastDone, pc.id)
		}
		if err == nil && pc.savepoint != nil && !pc.savepoint.stop {
			c.lastEnd = end
			done := make(chan struct{})
			close(done)
			pc.savepoint.res <- SavepointResult{Path: path, Notified: done}
			c.hist.mu.Lock()
			c.hist.stats = append(c.hist.stats, Stats{ID: pc.id, Triggered: pc.at, Duration: end.Sub(pc.at),
				Size: snap.Size(), FullSize: snap.Size(), Alignment: pc.alignment, Path: path, InFlight: inflight})
			c.hist.mu.Unlock()
		} else if err == nil {
			c.lastEnd = end
			complete := protocol.Complete{Checkpoint: pc.id, Confirm: pc.savepoint != nil}
			var cf *confirmation
			if complete.Confirm {
				cf = &confirmation{left: map[taskKey]bool{}, ch: make(chan struct{})}
			}
			for k, t := range c.tasks {
				if !c.done[k] {
					if cf != nil {
						cf.left[k] = true
					}
					t.Deliver(complete)
				}
			}
			if cf != nil {
				if len(cf.left) == 0 {
					close(cf.ch)
				} else {
					c.confirms[pc.id] = cf
				}
				pc.savepoint.res <- SavepointResult{Path: path, Notified: cf.ch}
			}
			c.hist.mu.Lock()
			size := snap.Size()
			full := size
			if d, ok := c.cfg.Storage.(interface{ SharedSize() (int64, int64) }); ok && pc.savepoint == nil {
				all, added := d.SharedSize()
				size, full = size+added, full+all
			}
			c.hist.stats = append(c.hist.stats, Stats{ID: pc.id, Triggered: pc.at, Duration: end.Sub(pc.at),
				Size: size, FullSize: full, Alignment: pc.alignment, Path: path, InFlight: inflight})
			c.hist.mu.Unlock()
		} else {
			err = fmt.Errorf("%w: checkpoint %d: %w", ErrAborted, pc.id, err)
			if pc.savepoint != nil {
				c.failSavepointLocked(pc.savepoint, err)
			}
			if !ended {
				c.failures = append(c.failures, failure{id: pc.id, savepoint: pc.savepoint != nil, err: err})
			}
			for k, t := range c.tasks {
				if !c.done[k] {
					t.Deliver(protocol.Abort{Checkpoint: pc.id, Reason: err.Error()})
				}
			}
			if gated {
				if c.failed == nil {
					c.failed = fmt.Errorf("stream: %w", err)
				}
				cancel = c.cancel
			}
		}
		c.mu.Unlock()
		if cancel != nil {
			cancel()
		}
		for _, w := range pc.waiters {
			w <- Result{ID: pc.id, Err: err}
		}
	}
}

// SetCancel sets how the coordinator cancels its attempt when too many
// checkpoints failed in a row.
func (c *Coordinator) SetCancel(cancel func()) {
	c.mu.Lock()
	c.cancel = cancel
	c.mu.Unlock()
}

// report tells Config.OnFailure of the checkpoints that failed since the
// last call, and fails the attempt at the first failure beyond
// TolerableFailures in a row (Flink's CheckpointFailureManager). A
// checkpoint completed after a failure resets the count.
func (c *Coordinator) report() {
	c.mu.Lock()
	fs, last := c.failures, c.lastDone
	c.failures = nil
	c.mu.Unlock()
	for _, f := range fs {
		if f.savepoint {
			continue // the stop that asked for it returns the error
		}
		if cb := c.cfg.OnFailure; cb != nil {
			cb(f.id, f.err)
		}
		c.hist.mu.Lock()
		c.hist.failed++
		if f.id > last {
			c.hist.failedInRow++
		}
		n := c.hist.failedInRow
		c.hist.mu.Unlock()
		if tol := c.cfg.TolerableFailures; tol >= 0 && n > tol {
			c.mu.Lock()
			if c.failed == nil {
				c.failed = fmt.Errorf("stream: too many failed checkpoints in a row (%d, %d tolerated): %w", n, tol, f.err)
			}
			cancel := c.cancel
			c.mu.Unlock()
			if cancel != nil {
				cancel()
			}
			return
		}
	}
	if last > 0 {
		c.hist.mu.Lock()
		if c.hist.lastDone < last {
			c.hist.lastDone, c.hist.failedInRow = last, 0
		}
		c.hist.mu.Unlock()
	}
}

// Failure returns why the coordinator failed its attempt, or nil.
func (c *Coordinator) Failure() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failed
}

// savepointWriter is a checkpoint storage that writes savepoints where it
// can reach (a checkpoint.Dir on a bucket writes them into the bucket).
type savepointWriter interface {
	WriteSavepoint(dir string, s *checkpoint.Snapshot, shared func(name string) (io.ReadCloser, error)) (string, error)
}

// openShared reads a shared file of the checkpoint storage, for a
// savepoint to copy; a storage without shared files has none.
func (c *Coordinator) openShared(name string) (io.ReadCloser, error) {
	if d, ok := c.cfg.Storage.(interface {
		OpenShared(name string) (io.ReadCloser, error)
	}); ok {
		return d.OpenShared(name)
	}
	return nil, fmt.Errorf("stream: shared file %s: the checkpoint storage has no shared files", name)
}

// snapshot builds the checkpoint of pc: the topology's stateful operators
// in program order, by stable id; it returns the bytes of channel state.
func (c *Coordinator) snapshot(pc *pending) (*checkpoint.Snapshot, int64) {
	s := &checkpoint.Snapshot{ID: pc.id, Kind: checkpoint.Checkpoint, Timestamp: pc.at.UnixMilli(), Fingerprint: c.cfg.Fingerprint}
	var inflight int64
	finished := c.finishedOperators(pc)
	for _, o := range c.topo.Operators {
		states, coord := pc.states[o.ID], pc.coord[o.ID]
		var fl [][]byte
		if t := c.topo.task(o.Vertex); t != nil && t.Operators[0] == o.ID {
			fl = pc.inflight[o.Vertex]
		}
		if states == nil && coord == nil && fl == nil && !finished[o.ID] {
			continue
		}
		op := checkpoint.OperatorState{ID: o.ID, Name: o.Name, Kind: o.Kind, Parallelism: o.Parallelism, MaxParallelism: o.MaxParallelism,
			Coordinator: coord, Finished: finished[o.ID], Subtasks: make([]checkpoint.SubtaskState, o.Parallelism)}
		for i := range op.Subtasks {
			op.Subtasks[i].Watermark = math.MinInt64
			if i < len(states) {
				op.Subtasks[i].State = states[i].state
				op.Subtasks[i].Shared = states[i].shared
				op.Subtasks[i].Watermark = states[i].watermark
			}
			if i < len(fl) {
				op.Subtasks[i].InFlight = fl[i]
				inflight += int64(len(fl[i]))
			}
		}
		s.Operators = append(s.Operators, op)
	}
	return s, inflight
}

// finishedOperators returns the operators of the tasks all of whose
// subtasks had finished for pc.
func (c *Coordinator) finishedOperators(pc *pending) map[string]bool {
	out := map[string]bool{}
	for _, t := range c.topo.Tasks {
		all := true
		for i := range t.Parallelism {
			all = all && pc.finished[taskKey{t.Vertex, i}]
		}
		if all {
			for _, op := range t.Operators {
				out[op] = true
			}
		}
	}
	return out
}

// shutdown aborts what is pending when the attempt ended.
func (c *Coordinator) shutdown() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ended = true
	for id := range c.pending {
		c.abortLocked(id, fmt.Errorf("%w: checkpoint %d: the job attempt ended", ErrAborted, id))
	}
	for _, pc := range c.completed {
		for _, w := range pc.waiters {
			w <- Result{ID: pc.id, Err: fmt.Errorf("%w: checkpoint %d: the job attempt ended", ErrAborted, pc.id)}
		}
		if pc.savepoint != nil {
			pc.savepoint.res <- SavepointResult{Err: fmt.Errorf("%w: savepoint %d: the job attempt ended", ErrAborted, pc.id)}
		}
	}
	c.completed = nil
	for _, r := range c.requests {
		r <- Result{Err: fmt.Errorf("%w: the job attempt ended", ErrAborted)}
	}
	c.requests = nil
	if c.savepoint != nil {
		c.savepoint.res <- SavepointResult{Err: fmt.Errorf("%w: the job attempt ended", ErrAborted)}
		c.savepoint = nil
	}
}
