package ha

import (
	"context"
	"errors"
)

// ErrFenced is returned for a write of an epoch whose leadership ended.
var ErrFenced = errors.New("ha: fenced: the writer's leadership has ended")

// ErrNoLeader is returned by Leader when no JobManager leads.
var ErrNoLeader = errors.New("ha: no leader")

// ErrNotFound is returned for a job the store does not hold.
var ErrNotFound = errors.New("ha: not found")

// Leadership is a JobManager's term as leader.
type Leadership struct {
	// Epoch numbers the leadership: larger for every later one.
	Epoch int64
	// Address is what the leader announced (its RPC address).
	Address string
	// Lost is closed when the leadership ends.
	Lost <-chan struct{}
}

// Leader is the current leader as other processes see it.
type Leader struct {
	Address string
	Epoch   int64
}

// Job is a job the leader runs, as a standby restarts it.
type Job struct {
	// ID is the job's id (32 hex digits, as Flink's JobID).
	ID string `json:"id"`
	// Incarnation tells apart the submissions of one id.
	Incarnation string `json:"incarnation"`
	Name        string `json:"name"`
	// Spec is what the JobManager rebuilds the job from.
	Spec []byte `json:"spec"`
	// Submitted is when the job was submitted, in Unix milliseconds.
	Submitted int64 `json:"submitted"`
}

// Checkpoint points at a job incarnation's latest completed checkpoint.
type Checkpoint struct {
	ID   int64  `json:"id"`
	Path string `json:"path"`
}

// Store is one JobManager's (or TaskManager's) handle on the cluster's
// high-availability data. It is safe for concurrent use.
type Store interface {
	// Campaign blocks until this process leads, announcing address, or ctx
	// ends. A process campaigns once at a time.
	Campaign(ctx context.Context, address string) (*Leadership, error)
	// Resign ends this process's leadership, if it leads.
	Resign(ctx context.Context) error
	// Leader returns the current leader, or ErrNoLeader.
	Leader(ctx context.Context) (Leader, error)
	// WatchLeader sends the current leader and every change of leader
	// (the zero Leader when none leads) until ctx ends.
	WatchLeader(ctx context.Context) <-chan Leader
	// PutJob writes job j (a new one, or another incarnation of an id),
	// fenced by epoch.
	PutJob(ctx context.Context, epoch int64, j Job) error
	// Jobs returns the jobs stored, by id.
	Jobs(ctx context.Context) ([]Job, error)
	// SetCheckpoint sets the checkpoint pointer of job id's incarnation,
	// fenced by epoch. It fails if the job is not stored with that
	// incarnation, or if c is not newer than the pointer stored.
	SetCheckpoint(ctx context.Context, epoch int64, id, incarnation string, c Checkpoint) error
	// LatestCheckpoint returns the checkpoint pointer of job id's
	// incarnation; false when it has none.
	LatestCheckpoint(ctx context.Context, id, incarnation string) (Checkpoint, bool, error)
	// RemoveJob removes job id's incarnation and its checkpoint pointers,
	// fenced by epoch.
	RemoveJob(ctx context.Context, epoch int64, id, incarnation string) error
	// Close resigns and releases the store's connections.
	Close() error
}
