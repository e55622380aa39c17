package jobmanager

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/weirdata/weir/cluster"
	"github.com/weirdata/weir/cluster/ha"
	"github.com/weirdata/weir/cluster/internal/rpc"
	"github.com/weirdata/weir/cluster/rest"
)

var _ rest.Cluster = (*JobManager)(nil)

// Overview is GET /overview.
func (jm *JobManager) Overview(ctx context.Context) (rest.Overview, error) {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	if _, err := jm.epochLocked(); err != nil {
		return rest.Overview{}, err
	}
	o := rest.Overview{TaskManagers: len(jm.tms), IsLeader: true, Version: jm.fp.Version, Commit: jm.fp.Revision}
	for _, tm := range jm.tms {
		o.SlotsTotal += tm.slots
		o.SlotsAvailable += tm.free
	}
	for _, j := range jm.jobs {
		o.CountJob(j.state)
	}
	return o, nil
}

func (jm *JobManager) overviewLocked(j *job) rest.JobOverview {
	now := jm.opts.Clock.Now().UnixMilli()
	end := now
	if j.end >= 0 {
		end = j.end
	}
	return rest.JobOverview{ID: j.id, Name: j.name, State: j.state, Start: j.submitted, End: j.end,
		Duration: end - j.submitted, LastModification: end}
}

// Jobs is GET /jobs/overview.
func (jm *JobManager) Jobs(ctx context.Context) ([]rest.JobOverview, error) {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	if _, err := jm.epochLocked(); err != nil {
		return nil, err
	}
	out := make([]rest.JobOverview, 0, len(jm.jobs))
	for _, j := range jm.jobs {
		out = append(out, jm.overviewLocked(j))
	}
	sort.Slice(out, func(a, b int) bool {
		return out[a].Start > out[b].Start || out[a].Start == out[b].Start && out[a].ID < out[b].ID
	})
	return out, nil
}

// job returns job jid, or rest.ErrNotFound.
func (jm *JobManager) jobLocked(jid string) (*job, error) {
	if _, err := jm.epochLocked(); err != nil {
		return nil, err
	}
	j := jm.jobs[jid]
	if j == nil {
		return nil, fmt.Errorf("jobmanager: job %s: %w", jid, rest.ErrNotFound)
	}
	return j, nil
}

// Job is GET /jobs/:jid. Its vertices are those its TaskManager reported,
// else one vertex of the whole job.
func (jm *JobManager) Job(ctx context.Context, jid string) (rest.JobDetails, error) {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	j, err := jm.jobLocked(jid)
	if err != nil {
		return rest.JobDetails{}, err
	}
	d := rest.JobDetails{JobOverview: jm.overviewLocked(j), IsStoppable: j.state == rest.StateRunning,
		Now: jm.opts.Clock.Now().UnixMilli(), Failure: j.failure}
	status := j.state
	par := 0
	if j.cur != nil {
		par = j.cur.slots
	}
	vs := j.vertices
	if len(vs) == 0 {
		d.Vertices = []rest.Vertex{{ID: j.id, Name: j.name, Parallelism: par}}
	}
	for _, v := range vs {
		d.Vertices = append(d.Vertices, rest.Vertex{ID: v.ID, Name: v.Name, Parallelism: v.Parallelism})
	}
	for i := range d.Vertices {
		d.Vertices[i].Status, d.Vertices[i].Start, d.Vertices[i].End, d.Vertices[i].Duration = status, d.Start, d.End, d.Duration
	}
	return d, nil
}

// Checkpoints is GET /jobs/:jid/checkpoints: the checkpoints recorded by
// the gate, across the job's attempts.
func (jm *JobManager) Checkpoints(ctx context.Context, jid string) (rest.Checkpoints, error) {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	j, err := jm.jobLocked(jid)
	if err != nil {
		return rest.Checkpoints{}, err
	}
	c := rest.Checkpoints{Counts: rest.CheckpointCounts{Completed: j.completed + j.sps, Total: j.completed + j.sps}}
	if j.restored != nil {
		c.Counts.Restored = 1
		r := *j.restored
		c.Latest.Restored = &r
	}
	if j.latest != nil {
		l := *j.latest
		c.Latest.Completed = &l
	}
	if j.savepoint != nil {
		s := *j.savepoint
		c.Latest.Savepoint = &s
	}
	return c, nil
}

// Reports returns the latest Report of each attempt of job jid that sent
// one, oldest first, and the job's restarts: its attempts deployed after
// the first. The program's view reads them (cluster.Control.Report).
func (jm *JobManager) Reports(ctx context.Context, jid string) ([]cluster.AttemptReport, int, error) {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	j, err := jm.jobLocked(jid)
	if err != nil {
		return nil, 0, err
	}
	rs := append([]cluster.AttemptReport(nil), j.reports...)
	for i := range rs {
		rs[i].Shares = slices.Clone(rs[i].Shares) // reportLocked writes them
	}
	return rs, max(j.deployed-1, 0), nil
}

// Exceptions is GET /jobs/:jid/exceptions: the failures of the job's
// attempts (the last maxExceptions), a lost TaskManager's included.
func (jm *JobManager) Exceptions(ctx context.Context, jid string) (rest.Exceptions, error) {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	j, err := jm.jobLocked(jid)
	if err != nil {
		return rest.Exceptions{}, err
	}
	return rest.NewExceptions(j.exceptions, j.exTruncated), nil
}

// Result is GET /jobs/:jid/execution-result: how the job ended and the
// standard output of the attempt that finished.
func (jm *JobManager) Result(ctx context.Context, jid string) (rest.JobResult, error) {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	j, err := jm.jobLocked(jid)
	if err != nil {
		return rest.JobResult{}, err
	}
	return rest.NewJobResult(jid, j.state, j.end-j.submitted, j.failure, j.stdout, j.stdoutDropped), nil
}

// TaskManagers is GET /taskmanagers.
func (jm *JobManager) TaskManagers(ctx context.Context) ([]rest.TaskManager, error) {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	if _, err := jm.epochLocked(); err != nil {
		return nil, err
	}
	now := jm.opts.Clock.Now()
	var out []rest.TaskManager
	for _, tm := range jm.sortedTMsLocked() {
		port := 0
		if _, p, err := net.SplitHostPort(tm.dataAddr); err == nil {
			port, _ = strconv.Atoi(p)
		}
		out = append(out, rest.TaskManager{ID: tm.id, Path: tm.address, DataPort: port, SlotsNumber: tm.slots, FreeSlots: tm.free,
			TimeSinceLastHeartbeat: now.Sub(tm.last).Milliseconds(), Hardware: rest.Hardware{CPUCores: tm.cores, ManagedMemory: tm.memory}})
	}
	return out, nil
}

// Cancel cancels job jid: its attempt is canceled on its TaskManager.
func (jm *JobManager) Cancel(ctx context.Context, jid string) error {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	j, err := jm.jobLocked(jid)
	if err != nil {
		return err
	}
	if rest.Ended(j.state) {
		return fmt.Errorf("jobmanager: job %s is %s: %w", jid, j.state, rest.ErrConflict)
	}
	if !j.canceled {
		j.canceled = true
		j.state = rest.StateCancelling
		close(j.cancel)
		if a := j.cur; a != nil && !a.ended {
			jm.cancelSharesLocked(j, a)
		}
		jm.notifyLocked()
	}
	return nil
}

// TriggerSavepoint asks the running attempt of jid for a savepoint under
// dir, with stop the job then stops.
func (jm *JobManager) TriggerSavepoint(ctx context.Context, jid, dir string, stop bool) (string, error) {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	j, err := jm.jobLocked(jid)
	if err != nil {
		return "", err
	}
	a := j.cur
	if j.state != rest.StateRunning || a == nil || a.ended {
		return "", fmt.Errorf("jobmanager: job %s is %s, not running: %w", jid, j.state, rest.ErrConflict)
	}
	if dir == "" {
		return "", fmt.Errorf("jobmanager: a savepoint of job %s needs a target directory: %w", jid, rest.ErrConflict)
	}
	trigger := newID(16)
	j.savepoints[trigger] = &rest.Savepoint{Status: "IN_PROGRESS"}
	a.savepoints[trigger] = stop
	a.stopping = a.stopping || stop
	jm.sendLocked(a.tm, &rpc.ToTM{Savepoint: &rpc.Savepoint{JobID: jid, Attempt: a.id, Trigger: trigger, Dir: dir, Stop: stop}})
	return trigger, nil
}

// savepointDone records a TaskManager's answer to a savepoint.
func (jm *JobManager) savepointDone(d *rpc.SavepointDone) {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	j := jm.jobs[d.JobID]
	if j == nil || j.savepoints[d.Trigger] == nil {
		return
	}
	j.savepoints[d.Trigger] = &rest.Savepoint{Status: "COMPLETED", Location: d.Path, Failure: d.Error}
	if a := j.cur; a != nil {
		if stop, ok := a.savepoints[d.Trigger]; ok {
			delete(a.savepoints, d.Trigger)
			if stop && d.Error != "" {
				a.stopping = false // the stop failed: the attempt runs on
			}
			jm.notifyLocked() // a rescale held back by the savepoint may go on
		}
	}
	if d.Error == "" {
		now := jm.opts.Clock.Now().UnixMilli()
		j.sps++
		j.savepoint = &rest.CompletedCheckpoint{Status: "COMPLETED", IsSavepoint: true, TriggerTimestamp: now, LatestAckTimestamp: now, ExternalPath: d.Path}
	}
}

// Savepoint is the state of a savepoint triggered.
func (jm *JobManager) Savepoint(ctx context.Context, jid, trigger string) (rest.Savepoint, error) {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	j, err := jm.jobLocked(jid)
	if err != nil {
		return rest.Savepoint{}, err
	}
	s := j.savepoints[trigger]
	if s == nil {
		return rest.Savepoint{}, fmt.Errorf("jobmanager: savepoint %s of job %s: %w", trigger, jid, rest.ErrNotFound)
	}
	return *s, nil
}

// Leader returns the leading JobManager's REST base URL.
func (jm *JobManager) Leader(ctx context.Context) (string, error) {
	jm.mu.Lock()
	_, err := jm.epochLocked()
	jm.mu.Unlock()
	if err == nil {
		return jm.RESTURL(), nil
	}
	l, err := jm.opts.HA.Leader(ctx)
	if errors.Is(err, ha.ErrNoLeader) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("jobmanager: leader: %w", err)
	}
	_, url, _ := strings.Cut(l.Address, " ")
	return url, nil
}
