// Package resttest is a rest.Cluster that holds its values in memory, for
// tests of the REST server, its client and the commands that use them.
package resttest

import (
	"context"
	"fmt"
	"sync"

	"github.com/weirdata/weir/cluster/rest"
)

// Trigger is a savepoint or stop request a Fake took.
type Trigger struct {
	JID, Dir string
	Stop     bool
}

// Fake is a rest.Cluster over the values its fields hold. Set the fields
// before serving; its methods are then safe for concurrent use.
//
//   - A Fake that does not lead (Standby) returns rest.ErrNotLeader from
//     every method but Leader, which returns LeaderURL.
//   - Job ids it does not hold are rest.ErrNotFound.
//   - Cancel of a job in a terminal state (FINISHED, CANCELED, FAILED) is
//     rest.ErrConflict; else the job becomes CANCELED.
//   - TriggerSavepoint of a job not RUNNING is rest.ErrConflict, with an
//     empty directory rest.ErrInvalid. Trigger n (from 1) has the id
//     fmt.Sprintf("%032x", n); it stays IN_PROGRESS for Pending calls of
//     Savepoint and then completes at Dir + "/savepoint-<n>", or fails
//     with SavepointFailure when that is set. A stop makes the job
//     FINISHED once its savepoint completed.
//   - Submit with no arguments is rest.ErrInvalid; job n (from 1) has the
//     id fmt.Sprintf("%032x", 0xabc000+n), the name Args[0], state RUNNING.
type Fake struct {
	Standby          bool
	LeaderURL        string
	OverviewValue    rest.Overview
	JobsValue        []rest.JobDetails
	CheckpointsValue map[string]rest.Checkpoints
	ExceptionsValue  map[string]rest.Exceptions
	StdoutValue      map[string][]byte
	TaskManagersList []rest.TaskManager
	Pending          int
	SavepointFailure string

	mu        sync.Mutex
	cancelled []string
	submitted []rest.Submission
	triggers  []Trigger
	polls     map[string]int
}

// Cancelled returns the ids of the jobs cancelled, in order.
func (f *Fake) Cancelled() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.cancelled...)
}

// Submitted returns the submissions taken, in order.
func (f *Fake) Submitted() []rest.Submission {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]rest.Submission(nil), f.submitted...)
}

// Triggers returns the savepoint and stop requests taken, in order.
func (f *Fake) Triggers() []Trigger {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Trigger(nil), f.triggers...)
}

// State returns job jid's state, "" for a job the Fake does not hold.
func (f *Fake) State(jid string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if i := f.find(jid); i >= 0 {
		return f.JobsValue[i].State
	}
	return ""
}

func (f *Fake) find(jid string) int {
	for i := range f.JobsValue {
		if f.JobsValue[i].ID == jid {
			return i
		}
	}
	return -1
}

func (f *Fake) lead() error {
	if f.Standby {
		return rest.ErrNotLeader
	}
	return nil
}

// Overview returns OverviewValue.
func (f *Fake) Overview(context.Context) (rest.Overview, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.OverviewValue, f.lead()
}

// Jobs returns the overviews of JobsValue.
func (f *Fake) Jobs(context.Context) ([]rest.JobOverview, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.lead(); err != nil {
		return nil, err
	}
	out := make([]rest.JobOverview, len(f.JobsValue))
	for i, j := range f.JobsValue {
		out[i] = j.JobOverview
	}
	return out, nil
}

// Job returns the entry of JobsValue with id jid.
func (f *Fake) Job(_ context.Context, jid string) (rest.JobDetails, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.lead(); err != nil {
		return rest.JobDetails{}, err
	}
	i := f.find(jid)
	if i < 0 {
		return rest.JobDetails{}, fmt.Errorf("resttest: job %s: %w", jid, rest.ErrNotFound)
	}
	return f.JobsValue[i], nil
}

// Checkpoints returns CheckpointsValue[jid].
func (f *Fake) Checkpoints(_ context.Context, jid string) (rest.Checkpoints, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.lead(); err != nil {
		return rest.Checkpoints{}, err
	}
	if f.find(jid) < 0 {
		return rest.Checkpoints{}, fmt.Errorf("resttest: job %s: %w", jid, rest.ErrNotFound)
	}
	return f.CheckpointsValue[jid], nil
}

// Exceptions returns ExceptionsValue[jid].
func (f *Fake) Exceptions(_ context.Context, jid string) (rest.Exceptions, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.lead(); err != nil {
		return rest.Exceptions{}, err
	}
	if f.find(jid) < 0 {
		return rest.Exceptions{}, fmt.Errorf("resttest: job %s: %w", jid, rest.ErrNotFound)
	}
	return f.ExceptionsValue[jid], nil
}

// Result answers the job's state with StdoutValue[jid] as its output and
// its duration as its run time.
func (f *Fake) Result(_ context.Context, jid string) (rest.JobResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.lead(); err != nil {
		return rest.JobResult{}, err
	}
	i := f.find(jid)
	if i < 0 {
		return rest.JobResult{}, fmt.Errorf("resttest: job %s: %w", jid, rest.ErrNotFound)
	}
	j := f.JobsValue[i]
	return rest.NewJobResult(jid, j.State, j.Duration, j.Failure, f.StdoutValue[jid], 0), nil
}

// TaskManagers returns TaskManagersList.
func (f *Fake) TaskManagers(context.Context) ([]rest.TaskManager, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.TaskManagersList, f.lead()
}

// Submit adds a RUNNING job named s.Args[0].
func (f *Fake) Submit(_ context.Context, s rest.Submission) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.lead(); err != nil {
		return "", err
	}
	if len(s.Args) == 0 {
		return "", fmt.Errorf("resttest: a submission needs the job's name: %w", rest.ErrInvalid)
	}
	f.submitted = append(f.submitted, s)
	jid := fmt.Sprintf("%032x", 0xabc000+len(f.submitted))
	f.JobsValue = append(f.JobsValue, rest.JobDetails{JobOverview: rest.JobOverview{ID: jid, Name: s.Args[0], State: rest.StateRunning, End: -1}})
	return jid, nil
}

// Cancel makes a job that has not ended CANCELED.
func (f *Fake) Cancel(_ context.Context, jid string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.lead(); err != nil {
		return err
	}
	i := f.find(jid)
	if i < 0 {
		return fmt.Errorf("resttest: job %s: %w", jid, rest.ErrNotFound)
	}
	if rest.Ended(f.JobsValue[i].State) {
		return fmt.Errorf("resttest: job %s is %s: %w", jid, f.JobsValue[i].State, rest.ErrConflict)
	}
	f.JobsValue[i].State = rest.StateCanceled
	f.cancelled = append(f.cancelled, jid)
	return nil
}

// TriggerSavepoint takes a savepoint request of a RUNNING job.
func (f *Fake) TriggerSavepoint(_ context.Context, jid, dir string, stop bool) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.lead(); err != nil {
		return "", err
	}
	i := f.find(jid)
	if i < 0 {
		return "", fmt.Errorf("resttest: job %s: %w", jid, rest.ErrNotFound)
	}
	if f.JobsValue[i].State != rest.StateRunning {
		return "", fmt.Errorf("resttest: job %s is %s: %w", jid, f.JobsValue[i].State, rest.ErrConflict)
	}
	if dir == "" {
		return "", fmt.Errorf("resttest: no savepoint directory: %w", rest.ErrInvalid)
	}
	f.triggers = append(f.triggers, Trigger{JID: jid, Dir: dir, Stop: stop})
	return fmt.Sprintf("%032x", len(f.triggers)), nil
}

// Savepoint answers for trigger n: IN_PROGRESS for Pending calls, then
// COMPLETED.
func (f *Fake) Savepoint(_ context.Context, jid, trigger string) (rest.Savepoint, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.lead(); err != nil {
		return rest.Savepoint{}, err
	}
	n := -1
	for k := range f.triggers {
		if fmt.Sprintf("%032x", k+1) == trigger && f.triggers[k].JID == jid {
			n = k
		}
	}
	if n < 0 {
		return rest.Savepoint{}, fmt.Errorf("resttest: savepoint %s of job %s: %w", trigger, jid, rest.ErrNotFound)
	}
	if f.polls == nil {
		f.polls = map[string]int{}
	}
	f.polls[trigger]++
	if f.polls[trigger] <= f.Pending {
		return rest.Savepoint{Status: rest.StatusInProgress}, nil
	}
	if f.SavepointFailure != "" {
		return rest.Savepoint{Status: rest.StatusCompleted, Failure: f.SavepointFailure}, nil
	}
	t := f.triggers[n]
	if t.Stop {
		f.JobsValue[f.find(jid)].State = rest.StateFinished
	}
	return rest.Savepoint{Status: rest.StatusCompleted, Location: fmt.Sprintf("%s/savepoint-%d", t.Dir, n+1)}, nil
}

// Leader returns LeaderURL.
func (f *Fake) Leader(context.Context) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.LeaderURL, nil
}
