package jobmanager

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/weirdata/weir/clock"
	"github.com/weirdata/weir/cluster"
	"github.com/weirdata/weir/cluster/ha"
	"github.com/weirdata/weir/cluster/internal/rpc"
	"github.com/weirdata/weir/cluster/rest"
)

// job is a job the JobManager runs; its fields are guarded by jm.mu.
type job struct {
	id, incarnation, name string
	args                  []string
	slots                 int  // asked for; 0: a TaskManager's free slots
	spreads               bool // the program may spread it (cluster.Spreader)
	submitted, end        int64

	state    string
	failure  string
	cur      *attempt // the attempt deployed, nil between attempts
	deployed int      // attempts deployed
	failures int      // attempts failed
	cancel   chan struct{}
	canceled bool
	done     chan struct{}
	vertices []cluster.Vertex
	reports  []cluster.AttemptReport // the latest of each attempt that sent one, oldest first
	// exceptions are the failures of its attempts, oldest first; the
	// oldest beyond maxExceptions are dropped (exTruncated).
	exceptions  []rest.Exception
	exTruncated bool
	// stdout is the standard output of the attempt that finished, with
	// the bytes its TaskManager did not keep.
	stdout        []byte
	stdoutDropped int64

	// gate orders the gate's checks and pointer writes with the restore
	// read of the next attempt: no stale attempt records a checkpoint
	// after the next attempt chose its restore.
	gate sync.Mutex

	restored   *rest.RestoredCheckpoint
	completed  int
	latest     *rest.CompletedCheckpoint
	savepoint  *rest.CompletedCheckpoint
	savepoints map[string]*rest.Savepoint
	sps        int    // savepoints triggered
	pruned     string // the attempt whose recorded checkpoint pruned the others' directories; under gate
}

// attempt is a deployment of a job on one TaskManager, or spread over
// several (a share on each); its fields are guarded by jm.mu.
type attempt struct {
	id string
	// tm is the first share's TaskManager (the one savepoints go to) and
	// slots the slots of all shares
	tm      *taskManager
	slots   int
	shares  []*share
	ended   bool
	outcome chan outcome // receives the attempt's end once

	checkpoints int             // checkpoints the gate recorded for it
	savepoints  map[string]bool // its savepoints in progress: trigger -> a stop's
	stopping    bool            // a stop with savepoint was asked of it
	rescaled    bool            // canceled to be deployed again at more slots
	held        string          // why its rescale was last held back, as logged

	// the times of its last recorded checkpoint and of the one before
	recordedAt, recordedBefore time.Time
	// a rescale that is due waits from armedAt for a checkpoint past the
	// armed-th, at most wait
	armed   int
	armedAt time.Time
	wait    time.Duration
}

// share is an attempt's part on one TaskManager.
type share struct {
	tm       *taskManager
	slots    int
	finished bool // its TaskManager reported it FINISHED
	ended    bool // its TaskManager reported its end
}

// grant is the slots of one TaskManager an attempt is to have.
type grant struct {
	tm    *taskManager
	slots int
}

// shareOn returns a's share on tm, nil if none.
func (a *attempt) shareOn(tm *taskManager) (int, *share) {
	for k, s := range a.shares {
		if s.tm == tm {
			return k, s
		}
	}
	return -1, nil
}

// outcome is how an attempt ended.
type outcome struct {
	state         string // rpc.Finished, rpc.Failed or rpc.Canceled
	err           string
	unrecoverable bool // no restart can cure it
}

// endAttemptLocked ends attempt a with o, once; its slots return to its
// TaskManager.
func (j *job) endAttemptLocked(a *attempt, o outcome) {
	if a == nil || a.ended {
		return
	}
	a.ended = true
	for _, s := range a.shares {
		if s.tm.attempts[j.id] == a {
			delete(s.tm.attempts, j.id)
			s.tm.free += s.slots
		}
	}
	a.outcome <- o
}

// cancelSharesLocked asks the TaskManagers of a's shares that did not
// report their end to cancel them: one share of a spread attempt failed.
func (jm *JobManager) cancelSharesLocked(j *job, a *attempt) {
	for _, s := range a.shares {
		select {
		case <-s.tm.lost:
			continue
		default:
		}
		if !s.ended {
			jm.sendLocked(s.tm, &rpc.ToTM{Cancel: &rpc.Cancel{JobID: j.id, Attempt: a.id}})
		}
	}
}

// start runs j's loop.
func (jm *JobManager) start(j *job) {
	j.state, j.cancel, j.done, j.savepoints = rest.StateCreated, make(chan struct{}), make(chan struct{}), map[string]*rest.Savepoint{}
	j.end = -1
	jm.mu.Lock()
	jm.jobs[j.id] = j
	ctx := jm.ctx
	jm.notifyLocked()
	jm.mu.Unlock()
	go jm.runJob(ctx, j)
}

// waitJobs waits for the job loops to return.
func (jm *JobManager) waitJobs() {
	jm.mu.Lock()
	var dones []chan struct{}
	for _, j := range jm.jobs {
		dones = append(dones, j.done)
	}
	jm.mu.Unlock()
	for _, d := range dones {
		<-d
	}
}

// runJob deploys j's attempts until it finishes, fails past its restarts
// or is canceled; it returns early when ctx ends (the JobManager stops:
// the job stays in the HA store for the next leader).
func (jm *JobManager) runJob(ctx context.Context, j *job) {
	defer close(j.done)
	for {
		grants, ok := jm.waitSlots(ctx, j)
		if !ok {
			if ctx.Err() == nil {
				jm.finish(ctx, j, rest.StateCanceled, "")
			}
			return
		}
		a, err := jm.deploy(ctx, j, grants)
		if err != nil {
			jm.mu.Lock()
			jm.cancelSharesLocked(j, a)
			j.endAttemptLocked(a, outcome{state: rpc.Failed, err: err.Error()})
			jm.mu.Unlock()
		}
		o, ok := jm.await(ctx, j, a)
		if !ok {
			return
		}
		jm.mu.Lock()
		j.cur = nil
		canceled, rescaled := j.canceled, a.rescaled
		jm.mu.Unlock()
		switch {
		case o.state == rpc.Finished:
			jm.finish(ctx, j, rest.StateFinished, "")
			return
		case canceled:
			jm.finish(ctx, j, rest.StateCanceled, "")
			return
		case rescaled && o.state == rpc.Canceled:
			// not a failure: the next attempt is deployed at once
			continue
		}
		jm.mu.Lock()
		j.failures++
		n := j.failures
		j.failedLocked(a, o.err, jm.opts.Clock.Now().UnixMilli())
		var delay clock.Timer
		if n <= jm.opts.RestartAttempts && !o.unrecoverable {
			// The delay counts from before the state reads RESTARTING: who
			// sees the state (a test moving a manual clock) knows it runs.
			delay = jm.opts.Clock.Timer(jm.opts.Clock.Now().Add(jm.opts.RestartDelay))
			j.state = rest.StateRestarting
		}
		jm.mu.Unlock()
		if o.unrecoverable {
			jm.finish(ctx, j, rest.StateFailed, fmt.Sprintf("attempt %s failed: %s (no restart can cure it)", a.id, o.err))
			return
		}
		if n > jm.opts.RestartAttempts {
			jm.finish(ctx, j, rest.StateFailed, fmt.Sprintf("attempt %s failed: %s (restarted %d times)", a.id, o.err, jm.opts.RestartAttempts))
			return
		}
		jm.logf("job %s attempt %s failed: %s; restarting in %v (%d of %d)", j.id, a.id, o.err, jm.opts.RestartDelay, n, jm.opts.RestartAttempts)
		select {
		case <-delay.C():
		case <-j.cancel:
			delay.Stop()
		case <-ctx.Done():
			delay.Stop()
		}
	}
}

// waitSlots waits for a TaskManager with free slots and returns the
// slots to grant j: on the TaskManager with the most free slots,
// min(asked, free), all free when j asks for 0. A job that spreads and
// asks for more than that TaskManager has free gets a share on each of
// the TaskManagers with a data plane, the most free first, up to what it
// asks, when those give it more slots. false: ctx ended or j was
// canceled.
func (jm *JobManager) waitSlots(ctx context.Context, j *job) ([]grant, bool) {
	for {
		jm.mu.Lock()
		if j.canceled {
			jm.mu.Unlock()
			return nil, false
		}
		var best *taskManager
		for _, tm := range jm.sortedTMsLocked() {
			if tm.free > 0 && (best == nil || tm.free > best.free) {
				best = tm
			}
		}
		if best != nil && jm.leading {
			slots := best.free
			if j.slots > 0 {
				slots = min(slots, j.slots)
			}
			grants := []grant{{best, slots}}
			if j.spreads && j.slots > best.free {
				// spread when that gives the job more slots than best alone
				if g := jm.spreadLocked(j.slots); len(g) > 1 && granted(g) > slots {
					grants = g
				}
			}
			jm.mu.Unlock()
			return grants, true
		}
		if j.state != rest.StateRestarting {
			j.state = rest.StateCreated
		}
		wait := jm.changed
		jm.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, false
		case <-j.cancel:
		case <-wait:
		}
	}
}

// granted sums the slots of grants.
func granted(grants []grant) int {
	n := 0
	for _, g := range grants {
		n += g.slots
	}
	return n
}

// spreadLocked returns the shares of a spread attempt asking for slots:
// the free slots of the TaskManagers with a data plane, the most free
// first, until slots.
func (jm *JobManager) spreadLocked(slots int) []grant {
	var tms []*taskManager
	for _, tm := range jm.sortedTMsLocked() {
		if tm.free > 0 && tm.dataAddr != "" {
			tms = append(tms, tm)
		}
	}
	sort.SliceStable(tms, func(a, b int) bool { return tms[a].free > tms[b].free })
	var grants []grant
	for _, tm := range tms {
		if slots <= 0 {
			break
		}
		n := min(tm.free, slots)
		grants = append(grants, grant{tm, n})
		slots -= n
	}
	return grants
}

// deploy starts an attempt of j with a share on each of grants' TaskManagers
// (one, unless it is spread), restoring the job's latest checkpoint.
func (jm *JobManager) deploy(ctx context.Context, j *job, grants []grant) (*attempt, error) {
	j.gate.Lock()
	defer j.gate.Unlock()
	jm.mu.Lock()
	epoch, _ := jm.epochLocked()
	j.deployed++
	a := &attempt{id: fmt.Sprintf("%d-%d", epoch, j.deployed), tm: grants[0].tm, outcome: make(chan outcome, 1),
		savepoints: map[string]bool{}}
	for _, g := range grants {
		a.shares = append(a.shares, &share{tm: g.tm, slots: g.slots})
		a.slots += g.slots
	}
	j.cur = a
	j.vertices = nil // the new attempt reports its own
	jm.mu.Unlock()
	ptr, ok, err := jm.opts.HA.LatestCheckpoint(ctx, j.id, j.incarnation)
	if err != nil {
		return a, fmt.Errorf("jobmanager: the latest checkpoint of job %s: %w", j.id, err)
	}
	jm.mu.Lock()
	defer jm.mu.Unlock()
	restore := ""
	if ok {
		restore = ptr.Path
		j.restored = &rest.RestoredCheckpoint{ID: ptr.ID, ExternalPath: ptr.Path, RestoreTimestamp: jm.opts.Clock.Now().UnixMilli()}
	}
	var spread *rpc.Spread
	if len(a.shares) > 1 {
		spread = &rpc.Spread{}
		for _, s := range a.shares {
			spread.Slots = append(spread.Slots, s.slots)
			spread.Addrs = append(spread.Addrs, s.tm.dataAddr)
		}
	}
	for _, s := range a.shares {
		select {
		case <-s.tm.lost:
			return a, fmt.Errorf("jobmanager: TaskManager %s was lost before the deployment", s.tm.id)
		default:
		}
		if s.tm.free < s.slots {
			return a, fmt.Errorf("jobmanager: TaskManager %s has %d free slots, not %d", s.tm.id, s.tm.free, s.slots)
		}
	}
	for k, s := range a.shares {
		d := &rpc.Deploy{JobID: j.id, Attempt: a.id, Args: j.args, Slots: s.slots, CheckpointDir: jm.attemptDir(j.id, a.id), Restore: restore}
		if spread != nil {
			sp := *spread
			sp.Part = k
			d.Spread = &sp
		}
		s.tm.free -= s.slots
		s.tm.attempts[j.id] = a
		jm.sendLocked(s.tm, &rpc.ToTM{Deploy: d})
	}
	j.state = rest.StateRunning
	if spread != nil {
		where := make([]string, len(a.shares))
		for k, s := range a.shares {
			where[k] = fmt.Sprintf("%s (%d)", s.tm.id, s.slots)
		}
		jm.logf("job %s attempt %s deployed spread over TaskManagers %s, restoring %q", j.id, a.id, strings.Join(where, ", "), restore)
	} else {
		jm.logf("job %s attempt %s deployed on TaskManager %s with %d slots, restoring %q", j.id, a.id, a.tm.id, a.slots, restore)
	}
	jm.notifyLocked()
	return a, nil
}

// status handles an attempt's status from its TaskManager.
func (jm *JobManager) status(tm *taskManager, s *rpc.Status) {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	j := jm.jobs[s.JobID]
	if j == nil {
		return
	}
	a := tm.attempts[s.JobID]
	if a == nil || a.id != s.Attempt {
		return // a stale attempt's
	}
	k, sh := a.shareOn(tm)
	if s.Report != nil && sh != nil {
		j.reportLocked(a.id, k, len(a.shares), s.Report)
	}
	if s.State == rpc.Running {
		if len(s.Vertices) > 0 {
			j.vertices = s.Vertices
		}
		return
	}
	if sh == nil || sh.ended {
		return
	}
	sh.ended = true
	if s.State == rpc.Finished {
		sh.finished = true
		if k == 0 { // the first share's output is the job's
			j.stdout, j.stdoutDropped = s.Stdout, s.StdoutDropped
		}
		for _, o := range a.shares {
			if !o.finished {
				return // the attempt finishes with its last share
			}
		}
	} else if len(a.shares) > 1 {
		s.Error = fmt.Sprintf("share %d of %d on TaskManager %s: %s", k, len(a.shares), tm.id, s.Error)
		jm.cancelSharesLocked(j, a)
	}
	j.endAttemptLocked(a, outcome{state: s.State, err: s.Error, unrecoverable: s.Unrecoverable})
	jm.notifyLocked()
}

// report keeps an attempt's Report, if the attempt is its TaskManager's
// current one of the job.
func (jm *JobManager) report(tm *taskManager, r *rpc.Report) {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	j := jm.jobs[r.JobID]
	if a := tm.attempts[r.JobID]; j != nil && a != nil && a.id == r.Attempt {
		if k, sh := a.shareOn(tm); sh != nil {
			j.reportLocked(a.id, k, len(a.shares), r.Data)
		}
	}
}

// maxExceptions bounds the failures a job keeps.
const maxExceptions = 64

// failedLocked keeps the failure of attempt a; jm.mu is held.
func (j *job) failedLocked(a *attempt, err string, now int64) {
	if len(j.exceptions) == maxExceptions {
		j.exceptions = append(j.exceptions[:0], j.exceptions[1:]...)
		j.exTruncated = true
	}
	e := rest.Exception{Name: fmt.Sprintf("attempt %s failed", a.id), Stacktrace: err, Timestamp: now}
	if a.tm != nil {
		e.TaskManagerID, e.Location = a.tm.id, a.tm.address
	}
	j.exceptions = append(j.exceptions, e)
}

// maxReports bounds the attempts whose Reports a job keeps: the oldest
// are dropped.
const maxReports = 64

// reportLocked keeps data as attempt's latest Report; jm.mu is held.
// Of a spread attempt of shares shares, the Report of share k goes into
// Shares[k], share 0's into Data too (the first share's holds the
// checkpoint history).
func (j *job) reportLocked(attempt string, k, shares int, data []byte) {
	n := len(j.reports)
	if n == 0 || j.reports[n-1].Attempt != attempt {
		if n == maxReports {
			j.reports = append(j.reports[:0], j.reports[1:]...)
		}
		j.reports = append(j.reports, cluster.AttemptReport{Attempt: attempt})
		n = len(j.reports)
	}
	r := &j.reports[n-1]
	if k == 0 {
		r.Data = data
	}
	if shares > 1 {
		if r.Shares == nil {
			r.Shares = make([][]byte, shares)
		}
		r.Shares[k] = data
	}
}

// finish ends j in state (FINISHED, CANCELED or FAILED) and removes it
// from the HA store. A job FINISHED or CANCELED loses its checkpoint
// directory; a FAILED one keeps it, to restore from by hand. The state
// shows once the cleanup is done: a job seen ended has no directory left.
func (jm *JobManager) finish(ctx context.Context, j *job, state, failure string) {
	jm.mu.Lock()
	epoch, err := jm.epochLocked()
	jm.mu.Unlock()
	if err == nil {
		if err := jm.opts.HA.RemoveJob(ctx, epoch, j.id, j.incarnation); err != nil && !errors.Is(err, ha.ErrNotFound) {
			jm.logf("job %s: remove from the HA store: %v", j.id, err)
		}
	}
	if state != rest.StateFailed {
		if err := jm.removeJobDir(ctx, j.id); err != nil {
			jm.logf("job %s: %v", j.id, err)
		}
	}
	jm.mu.Lock()
	j.state, j.failure, j.end = state, failure, jm.opts.Clock.Now().UnixMilli()
	jm.notifyLocked()
	jm.mu.Unlock()
	jm.logf("job %s %s %s", j.id, state, failure)
}

// Gate records a checkpoint of an attempt as its job's latest, if the
// attempt is the job's current one and this JobManager still leads at
// the request's epoch.
func (jm *JobManager) Gate(ctx context.Context, req *rpc.GateRequest) (*rpc.GateReply, error) {
	jm.mu.Lock()
	j := jm.jobs[req.JobID]
	jm.mu.Unlock()
	if j == nil {
		return nil, fmt.Errorf("jobmanager: checkpoint %d of unknown job %s refused", req.Checkpoint, req.JobID)
	}
	j.gate.Lock()
	defer j.gate.Unlock()
	jm.mu.Lock()
	epoch, err := jm.epochLocked()
	switch {
	case err != nil:
		err = fmt.Errorf("jobmanager: checkpoint %d of job %s refused: this JobManager does not lead", req.Checkpoint, req.JobID)
	case req.Epoch != epoch:
		err = fmt.Errorf("jobmanager: checkpoint %d of job %s refused: epoch %d, the leader's is %d", req.Checkpoint, req.JobID, req.Epoch, epoch)
	case j.cur == nil || j.cur.id != req.Attempt || j.cur.ended:
		err = fmt.Errorf("jobmanager: checkpoint %d of job %s refused: attempt %s is not the job's current attempt", req.Checkpoint, req.JobID, req.Attempt)
	}
	a := j.cur
	jm.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if err := jm.opts.HA.SetCheckpoint(ctx, epoch, j.id, j.incarnation, ha.Checkpoint{ID: req.Checkpoint, Path: req.Path}); err != nil {
		return nil, fmt.Errorf("jobmanager: checkpoint %d of job %s: %w", req.Checkpoint, req.JobID, err)
	}
	now := jm.opts.Clock.Now().UnixMilli()
	jm.mu.Lock()
	if j.pruned != req.Attempt && strings.HasPrefix(req.Path, jm.attemptDir(j.id, req.Attempt)+"/") && !jm.closing {
		// The pointer is in this attempt's directory: the superseded
		// attempts' directories hold nothing a restore reads. They go
		// beside the job, so that the checkpoint does not wait for them
		// (many objects on S3).
		j.pruned = req.Attempt
		jm.bg.Add(1)
		go func(ctx context.Context, jid, keep string) {
			defer jm.bg.Done()
			if err := jm.pruneAttempts(ctx, jid, keep); err != nil {
				jm.logf("job %s: %v", jid, err)
			}
		}(jm.ctx, j.id, req.Attempt)
	}
	j.completed++
	j.latest = &rest.CompletedCheckpoint{ID: req.Checkpoint, Status: "COMPLETED", TriggerTimestamp: now, LatestAckTimestamp: now, ExternalPath: req.Path}
	a.checkpoints++
	a.recordedBefore, a.recordedAt = a.recordedAt, jm.opts.Clock.Now()
	jm.notifyLocked() // a rescale may wait for this checkpoint
	jm.mu.Unlock()
	return &rpc.GateReply{}, nil
}
