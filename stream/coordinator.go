package stream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/stream/checkpoint"
)

// CheckpointStats is one completed checkpoint, as Flink's checkpoint
// statistics: its id, when it was triggered, how long it took from the
// trigger to the end of Store (on the job's Clock), its size, the longest
// barrier alignment of a task, and where the storage keeps it.
type CheckpointStats struct {
	ID        int64
	Triggered time.Time
	Duration  time.Duration
	// Size is the bytes the checkpoint wrote (Flink's checkpointed data
	// size): its inline state, channel state and, for an incremental
	// checkpoint, the shared files it added. FullSize is the bytes of all
	// the state it restores from (Flink's full checkpoint data size): with
	// the shared files it names that earlier checkpoints wrote. Without
	// shared files the two are equal.
	Size      int64
	FullSize  int64
	Alignment time.Duration
	Path      string
	// InFlight is the bytes of channel state the checkpoint persisted
	// (unaligned checkpoints): the records in flight between the tasks.
	InFlight int64
}

// errCheckpointAborted is the error of a checkpoint that did not complete.
var errCheckpointAborted = errors.New("stream: checkpoint aborted")

// taskKey names a subtask of the job.
type taskKey struct {
	tp      *taskPlan
	subtask int
}

// pendingCheckpoint is a checkpoint triggered and not complete.
type pendingCheckpoint struct {
	id        int64
	at        time.Time // on the job's clock
	acked     map[taskKey]bool
	finished  map[taskKey]bool // acknowledged by finishing (FLIP-147)
	states    map[*node][][]byte
	inflight  map[*node][][]byte // channel state, by task head and subtask
	coord     map[*node][]byte
	alignment time.Duration
	waiters   []chan checkpointResult
	shared    map[*node][][]string // the shared files subtasks' states name
	savepoint *savepointRequest    // nil: a checkpoint
}

type checkpointResult struct {
	id  int64
	err error
}

// savepointRequest is a stop-with-savepoint: the savepoint goes into dir,
// and the sources read nothing after its barrier.
type savepointRequest struct {
	dir string
	res chan savepointResult
}

// savepointResult is a completed savepoint (its path, and notified, which
// is closed once every running task was notified of its completion), or
// why it was aborted.
type savepointResult struct {
	path     string
	notified <-chan struct{}
	err      error
}

// countdown closes its channel when done was called n times.
type countdown struct {
	mu sync.Mutex
	n  int
	ch chan struct{}
}

func newCountdown(n int) *countdown {
	c := &countdown{n: n, ch: make(chan struct{})}
	if n == 0 {
		close(c.ch)
	}
	return c
}

func (c *countdown) done() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n--; c.n == 0 {
		close(c.ch)
	}
}

// coordinator is a job attempt's checkpoint coordinator (Flink's
// CheckpointCoordinator). Its goroutine triggers checkpoint n every
// Interval of the job's clock, when the job's tasks all run, no more than
// MaxConcurrentCheckpoints are pending and MinPauseBetweenCheckpoints
// passed since the last completed: it snapshots the source enumerators
// (their valves closed) and posts a trigger to every source subtask. Tasks
// acknowledge with their operators' snapshots; once all did, the same
// goroutine stores the checkpoint (never a task's goroutine) and then posts
// the completion to every task. A checkpoint not complete within Timeout
// is aborted, and so are the pending ones when the attempt ends.
//
// Checkpoints go on after tasks finished (Flink's FLIP-147): a finished
// task is not triggered and counts as acknowledged, with no state, for the
// checkpoints pending when it finished and every later one; the operators
// of a task all of whose subtasks finished are recorded as finished in the
// snapshot, and a restore does not run them again.
type coordinator struct {
	cfg    *CheckpointConfig
	fp     string // the job's fingerprint, stored in each snapshot
	p      *program
	clock  flow.Clock
	ids    map[*node]string
	hist   *checkpointHistory
	expect int

	mu        sync.Mutex
	tasks     map[taskKey]*mailbox
	sources   []taskKey
	done      map[taskKey]bool // tasks that finished
	pending   map[int64]*pendingCheckpoint
	completed []*pendingCheckpoint // acknowledged by all, to store
	requests  []chan checkpointResult
	savepoint *savepointRequest // requested, not yet triggered
	stopping  bool              // a stop-with-savepoint is in progress
	lastEnd   time.Time
	started   time.Time // the attempt's start, for the restore time
	restoring bool
	ended     bool // the attempt ended: aborts are not failures
	kick      chan struct{}
	// failures are the checkpoints failed and not yet reported
	// (CheckpointConfig.OnFailure, TolerableFailures); lastDone is the
	// newest completed checkpoint, before which a failure counts no more.
	failures []checkpointFailure
	lastDone int64
	// cancel cancels the attempt; failed is why the coordinator did (too
	// many failed checkpoints), read by the job once the attempt ended.
	cancel func()
	failed error
}

// checkpointFailure is a checkpoint that failed; a savepoint's failure is
// returned to the stop that asked for it and not counted.
type checkpointFailure struct {
	id        int64
	savepoint bool
	err       error
}

// checkpointHistory is what a job keeps across its attempts: the next
// checkpoint id and the completed checkpoints' statistics.
type checkpointHistory struct {
	mu          sync.Mutex
	next        int64
	failedInRow int   // checkpoints failed since the last that completed
	lastDone    int64 // the newest checkpoint completed
	stats       []CheckpointStats
	restores    []time.Duration
	restarts    int
}

func (h *checkpointHistory) nextID() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.next++
	return h.next
}

func newCoordinator(p *program, cfg *CheckpointConfig, clock flow.Clock, hist *checkpointHistory, restoring bool) *coordinator {
	c := &coordinator{cfg: cfg, fp: p.env.fingerprint(), p: p, clock: clock, ids: p.env.operatorIDs(), hist: hist,
		tasks: map[taskKey]*mailbox{}, done: map[taskKey]bool{}, pending: map[int64]*pendingCheckpoint{}, kick: make(chan struct{}, 1),
		started: clock.Now(), restoring: restoring}
	for _, tp := range p.tasks {
		c.expect += tp.head.parallelism
	}
	return c
}

func (c *coordinator) wake() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// register adds a running task; it returns the task's mailbox.
func (c *coordinator) register(k taskKey) *mailbox {
	mb := newMailbox()
	c.mu.Lock()
	c.tasks[k] = mb
	if k.tp.head.source {
		c.sources = append(c.sources, k)
	}
	if len(c.tasks) == c.expect && c.restoring {
		c.restoring = false
		c.hist.mu.Lock()
		c.hist.restores = append(c.hist.restores, c.clock.Now().Sub(c.started))
		c.hist.mu.Unlock()
	}
	c.mu.Unlock()
	c.wake()
	return mb
}

// taskFinished records that a task's input ended and it returned: it
// acknowledges, finished, the checkpoints pending that it did not, and is
// not triggered any more. Its consumers saw its end before any later
// barrier, so their snapshots hold the effect of all its output.
func (c *coordinator) taskFinished(k taskKey) {
	c.mu.Lock()
	c.done[k] = true
	for id, pc := range c.pending {
		if !pc.acked[k] {
			pc.acked[k], pc.finished[k] = true, true
			c.completeLocked(id, pc)
		}
	}
	c.mu.Unlock()
	c.wake()
}

// completeLocked moves pc to the completed ones once every task
// acknowledged it; c.mu is held.
func (c *coordinator) completeLocked(id int64, pc *pendingCheckpoint) {
	if len(pc.acked) == c.expect {
		delete(c.pending, id)
		c.completed = append(c.completed, pc)
		c.wake()
	}
}

// triggeredAt returns when pending checkpoint id was triggered.
func (c *coordinator) triggeredAt(id int64) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if pc := c.pending[id]; pc != nil {
		return pc.at, true
	}
	return time.Time{}, false
}

// ack records task k's snapshots for checkpoint id (by node of its chain),
// its channel state (unaligned checkpoints) and the time its barrier
// alignment took.
func (c *coordinator) ack(id int64, k taskKey, states map[*node][]byte, inflight []byte, alignment time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	pc := c.pending[id]
	if pc == nil || pc.acked[k] {
		return // aborted
	}
	pc.acked[k] = true
	pc.alignment = max(pc.alignment, alignment)
	for n, b := range states {
		s := pc.states[n]
		if s == nil {
			s = make([][]byte, n.parallelism)
			pc.states[n] = s
		}
		s[k.subtask] = b
	}
	if len(inflight) > 0 {
		n := k.tp.head
		s := pc.inflight[n]
		if s == nil {
			s = make([][]byte, n.parallelism)
			pc.inflight[n] = s
		}
		s[k.subtask] = inflight
	}
	c.completeLocked(id, pc)
}

// decline aborts checkpoint id for task k, whose part of it failed (Flink's
// declineCheckpoint).
func (c *coordinator) decline(id int64, k taskKey, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if pc := c.pending[id]; pc == nil || pc.acked[k] {
		return
	}
	c.abortLocked(id, fmt.Errorf("%w: checkpoint %d declined by %s subtask %d: %w", errCheckpointAborted, id, k.tp.head.name, k.subtask, err))
}

// request asks for a checkpoint now; the result says when it completed.
func (c *coordinator) request() <-chan checkpointResult {
	ch := make(chan checkpointResult, 1)
	c.mu.Lock()
	c.requests = append(c.requests, ch)
	c.mu.Unlock()
	c.wake()
	return ch
}

// requestSavepoint asks for a stop-with-savepoint into dir.
func (c *coordinator) requestSavepoint(dir string) *savepointRequest {
	r := &savepointRequest{dir: dir, res: make(chan savepointResult, 1)}
	c.mu.Lock()
	if c.savepoint != nil || c.stopping {
		c.mu.Unlock()
		r.res <- savepointResult{err: errors.New("stream: stop with savepoint: one is in progress already")}
		return r
	}
	c.savepoint = r
	c.mu.Unlock()
	c.wake()
	return r
}

// abortLocked drops pending checkpoint id; c.mu is held. The sources of an
// aborted stop-with-savepoint read on.
func (c *coordinator) abortLocked(id int64, err error) {
	pc := c.pending[id]
	if pc == nil {
		return
	}
	delete(c.pending, id)
	if !c.ended {
		c.failures = append(c.failures, checkpointFailure{id: id, savepoint: pc.savepoint != nil, err: err})
		c.wake()
	}
	for _, w := range pc.waiters {
		w <- checkpointResult{id: id, err: err}
	}
	if pc.savepoint != nil {
		c.failSavepointLocked(pc.savepoint, err)
	}
}

// failSavepointLocked reports a stop-with-savepoint that failed and lets
// the sources read on; c.mu is held.
func (c *coordinator) failSavepointLocked(r *savepointRequest, err error) {
	r.res <- savepointResult{err: err}
	c.stopping = false
	for _, k := range c.sources {
		if !c.done[k] {
			c.tasks[k].post(mail{kind: mailResume})
		}
	}
}

// run is the coordinator's goroutine, until ctx ends.
func (c *coordinator) run(ctx context.Context) {
	interval := c.cfg.Interval
	next := c.started.Add(interval)
	for {
		now := c.clock.Now()
		c.expire(now)
		c.store()
		c.report()
		if c.due(now, next) {
			if c.trigger(now) {
				next = now.Add(interval)
			}
		}
		wakeAt, ok := c.wakeAt(now, next)
		var tc <-chan time.Time
		var t flow.Timer
		if ok {
			t = c.clock.Timer(wakeAt)
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
func (c *coordinator) due(now, next time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !now.Before(next) || len(c.requests) > 0 || c.savepoint != nil
}

// wakeAt is when the loop must look again: the next trigger, a pending
// checkpoint's timeout or the end of the min pause.
func (c *coordinator) wakeAt(now, next time.Time) (time.Time, bool) {
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
		consider(c.lastEnd.Add(c.cfg.MinPauseBetweenCheckpoints))
	}
	return at, ok
}

// expire aborts the checkpoints past their timeout.
func (c *coordinator) expire(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, pc := range c.pending {
		if !now.Before(pc.at.Add(c.cfg.Timeout)) {
			c.abortLocked(id, fmt.Errorf("%w: checkpoint %d expired before completing", errCheckpointAborted, id))
		}
	}
}

// trigger starts a checkpoint when the job allows one now.
func (c *coordinator) trigger(now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.done) == c.expect {
		for _, r := range c.requests {
			r <- checkpointResult{err: fmt.Errorf("%w: every task of the job finished", errCheckpointAborted)}
		}
		c.requests = nil
		if c.savepoint != nil {
			c.savepoint.res <- savepointResult{err: fmt.Errorf("%w: every task of the job finished", errCheckpointAborted)}
			c.savepoint = nil
		}
		return false
	}
	if c.stopping || len(c.tasks) < c.expect || len(c.pending) >= c.cfg.MaxConcurrentCheckpoints {
		return false
	}
	if !c.lastEnd.IsZero() && now.Before(c.lastEnd.Add(c.cfg.MinPauseBetweenCheckpoints)) {
		return false
	}
	id := c.hist.nextID()
	pc := &pendingCheckpoint{id: id, at: now, acked: map[taskKey]bool{}, finished: map[taskKey]bool{},
		states: map[*node][][]byte{}, inflight: map[*node][][]byte{}, coord: map[*node][]byte{}, waiters: c.requests,
		savepoint: c.savepoint}
	c.requests = nil
	c.savepoint = nil
	c.stopping = pc.savepoint != nil
	c.pending[id] = pc
	for k := range c.done {
		pc.acked[k], pc.finished[k] = true, true
	}
	for _, n := range c.p.env.nodes {
		if n.valve == nil {
			continue
		}
		b, err := encodeEnumeratorState(n.valve.snapshotAndClose())
		if err != nil {
			for _, k := range c.sources {
				if k.tp.head == n {
					n.valve.open(k.subtask)
				}
			}
			c.abortLocked(id, fmt.Errorf("%w: checkpoint %d: %s: %w", errCheckpointAborted, id, n.name, err))
			return true
		}
		pc.coord[n] = b
	}
	for _, k := range c.sources {
		if !c.done[k] {
			c.tasks[k].post(mail{kind: mailTrigger, id: id, stop: c.stopping})
		}
	}
	return true
}

// store writes the checkpoints every task acknowledged, in order, and tells
// the tasks they completed.
func (c *coordinator) store() {
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
			path, err = checkpoint.WriteSavepoint(pc.savepoint.dir, snap, c.openShared)
		} else {
			path, err = c.cfg.Storage.Store(snap)
		}
		end := c.clock.Now()
		c.mu.Lock()
		if err == nil && pc.savepoint == nil {
			c.lastDone = max(c.lastDone, pc.id)
		}
		if err == nil {
			c.lastEnd = end
			notified := newCountdown(len(c.tasks) - len(c.done))
			for k, mb := range c.tasks {
				if !c.done[k] {
					mb.post(mail{kind: mailComplete, id: pc.id, done: notified.done})
				}
			}
			if pc.savepoint != nil {
				pc.savepoint.res <- savepointResult{path: path, notified: notified.ch}
			}
			c.hist.mu.Lock()
			size := snap.Size()
			full := size
			if d, ok := c.cfg.Storage.(interface{ SharedSize() (int64, int64) }); ok && pc.savepoint == nil {
				all, added := d.SharedSize()
				size, full = size+added, full+all
			}
			c.hist.stats = append(c.hist.stats, CheckpointStats{ID: pc.id, Triggered: pc.at, Duration: end.Sub(pc.at),
				Size: size, FullSize: full, Alignment: pc.alignment, Path: path, InFlight: inflight})
			c.hist.mu.Unlock()
		} else {
			err = fmt.Errorf("%w: checkpoint %d: %w", errCheckpointAborted, pc.id, err)
			if pc.savepoint != nil {
				c.failSavepointLocked(pc.savepoint, err)
			}
			c.failures = append(c.failures, checkpointFailure{id: pc.id, savepoint: pc.savepoint != nil, err: err})
		}
		c.mu.Unlock()
		for _, w := range pc.waiters {
			w <- checkpointResult{id: pc.id, err: err}
		}
	}
}

// report tells CheckpointConfig.OnFailure of the checkpoints that failed
// since the last call, and fails the attempt at the first failure beyond
// TolerableFailures in a row (Flink's CheckpointFailureManager). A
// checkpoint completed after a failure resets the count.
func (c *coordinator) report() {
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

// failure returns why the coordinator failed the attempt, or nil.
func (c *coordinator) failure() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failed
}

// openShared reads a shared file of the checkpoint storage, for a
// savepoint to copy; a storage without shared files has none.
func (c *coordinator) openShared(name string) (io.ReadCloser, error) {
	if d, ok := c.cfg.Storage.(interface {
		OpenShared(name string) (io.ReadCloser, error)
	}); ok {
		return d.OpenShared(name)
	}
	return nil, fmt.Errorf("stream: shared file %s: the checkpoint storage has no shared files", name)
}

// snapshot builds the checkpoint of pc: the program's stateful operators
// in program order, by stable id; it returns the bytes of channel state.
func (c *coordinator) snapshot(pc *pendingCheckpoint) (*checkpoint.Snapshot, int64) {
	s := &checkpoint.Snapshot{ID: pc.id, Kind: checkpoint.Checkpoint, Timestamp: pc.at.UnixMilli(), Fingerprint: c.fp}
	var inflight int64
	finished := c.finishedNodes(pc)
	for _, n := range c.p.env.nodes {
		states, coord, fl := pc.states[n], pc.coord[n], pc.inflight[n]
		if states == nil && coord == nil && fl == nil && !finished[n] {
			continue
		}
		op := checkpoint.OperatorState{ID: c.ids[n], Name: n.name, Parallelism: n.parallelism, MaxParallelism: n.maxP,
			Coordinator: coord, Finished: finished[n], Subtasks: make([]checkpoint.SubtaskState, n.parallelism)}
		for i := range op.Subtasks {
			if i < len(states) {
				op.Subtasks[i].State = states[i]
			}
			if sh := pc.shared[n]; i < len(sh) {
				op.Subtasks[i].Shared = sh[i]
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

// finishedNodes returns the nodes of the tasks all of whose subtasks had
// finished for pc: each task's head and the nodes chained to it.
func (c *coordinator) finishedNodes(pc *pendingCheckpoint) map[*node]bool {
	out := map[*node]bool{}
	for _, tp := range c.p.tasks {
		all := true
		for i := range tp.head.parallelism {
			all = all && pc.finished[taskKey{tp, i}]
		}
		if !all {
			continue
		}
		for stack := []*node{tp.head}; len(stack) > 0; {
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			out[n] = true
			for _, pt := range n.ports {
				for _, e := range pt.consumers {
					if chained(e) {
						stack = append(stack, e.to)
					}
				}
			}
		}
	}
	return out
}

// shutdown aborts what is pending when the attempt ended.
func (c *coordinator) shutdown() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ended = true
	for id := range c.pending {
		c.abortLocked(id, fmt.Errorf("%w: checkpoint %d: the job attempt ended", errCheckpointAborted, id))
	}
	for _, pc := range c.completed {
		for _, w := range pc.waiters {
			w <- checkpointResult{id: pc.id, err: fmt.Errorf("%w: checkpoint %d: the job attempt ended", errCheckpointAborted, pc.id)}
		}
		if pc.savepoint != nil {
			pc.savepoint.res <- savepointResult{err: fmt.Errorf("%w: savepoint %d: the job attempt ended", errCheckpointAborted, pc.id)}
		}
	}
	c.completed = nil
	for _, r := range c.requests {
		r <- checkpointResult{err: fmt.Errorf("%w: the job attempt ended", errCheckpointAborted)}
	}
	c.requests = nil
	if c.savepoint != nil {
		c.savepoint.res <- savepointResult{err: fmt.Errorf("%w: the job attempt ended", errCheckpointAborted)}
		c.savepoint = nil
	}
}

// isSavepoint reports whether checkpoint id is a savepoint, whose snapshots
// are full and in the canonical format whatever the state backend (as
// Flink's savepoints), so that any backend restores it.
func (c *coordinator) isSavepoint(id int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	pc := c.pending[id]
	return pc != nil && pc.savepoint != nil
}

// addShared records the shared files that the state subtask of n acknowledges
// for checkpoint id names (an incremental snapshot's).
func (c *coordinator) addShared(id int64, n *node, subtask int, names []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	pc := c.pending[id]
	if pc == nil || len(names) == 0 {
		return
	}
	if pc.shared == nil {
		pc.shared = map[*node][][]string{}
	}
	s := pc.shared[n]
	if s == nil {
		s = make([][]string, n.parallelism)
		pc.shared[n] = s
	}
	s[subtask] = append(s[subtask], names...)
}
