package cluster

import (
	"context"
	"io"

	"github.com/weirdata/weir/cluster/shuffle"
)

// Env is what a TaskManager gives one attempt of a job it runs.
type Env struct {
	// JobID is the job's id (32 hex digits); Attempt numbers its
	// deployments, unique within the job.
	JobID   string
	Attempt string
	// CheckpointDir is the attempt's own checkpoint directory (a local or
	// shared path, or an s3:// URL); no other attempt writes there.
	CheckpointDir string
	// Restore is the checkpoint to start from (a path or URL the
	// checkpoint package loads), or "" to start from the beginning.
	Restore string
	// Slots is how many slots the attempt was granted: the cap of its
	// parallelism. A program runs at min(its parallelism, Slots); a
	// restore rescales its state to it.
	Slots int
	// Stdout is the attempt's standard output: the TaskManager's, and the
	// first MaxStdout bytes of it go back to the JobManager with the
	// attempt's end, where a client reads a finished job's output
	// (GET /jobs/:jid/execution-result). Stderr is the TaskManager's.
	Stdout, Stderr io.Writer
	// Gate must be called with each checkpoint once its metadata is
	// stored and before it counts as complete (stream's
	// CheckpointConfig.CompletionGate): the JobManager records it as the
	// job's latest. An error means the attempt is stale or its JobManager
	// lost leadership: the checkpoint must not complete and the attempt
	// must end.
	Gate func(ctx context.Context, id int64, path string) error
	// Started, when the program calls it, hands the TaskManager the
	// running job's controls (savepoints) and its vertices.
	Started func(Control)
	// Spread is set when the attempt runs spread over several
	// TaskManagers (a Spreader's job): this TaskManager runs its share.
	// Slots is then this share's slots.
	Spread *Spread
}

// Spread is one share of an attempt spread over several TaskManagers.
// Every share runs the same program with the same arguments; each runs
// the subtasks the placement gives it (dataset.Spread's: subtask i of
// every operator in the share holding slot i modulo the total) and
// exchanges records with the others over the TaskManagers' shuffle
// (cluster/dataplane's flow.Transport over Client and Server).
type Spread struct {
	// Part is this share's index in Slots and Addrs.
	Part int
	// Slots are the slots of each share; Addrs the data (shuffle)
	// address of each share's TaskManager.
	Slots []int
	Addrs []string
	// Channels prefixes the names of the attempt's shuffle channels (the
	// job and the attempt): a program adds what tells its executions
	// apart, so no two mix.
	Channels string
	// Client and Server are this TaskManager's end of the shuffle.
	Client *shuffle.Client
	Server *shuffle.Server
}

// Spreader is a Program some of whose jobs run spread over several
// TaskManagers when no one TaskManager has the slots they ask for.
type Spreader interface {
	// Spreads reports whether the job args may be spread.
	Spreads(args []string) bool
}

// MaxStdout is the most of an attempt's standard output a TaskManager
// sends back to the JobManager; the rest is only on the TaskManager's.
const MaxStdout = 8 << 20

// Vertex is one vertex of a running job, as the REST API shows it.
type Vertex struct {
	ID          string
	Name        string
	Parallelism int
}

// Control is a running attempt as a TaskManager drives it.
type Control interface {
	// Savepoint writes a savepoint under dir and returns its path; with
	// stop, the job then stops (Flink's stop with savepoint).
	Savepoint(ctx context.Context, dir string, stop bool) (string, error)
	// Vertices are the job's vertices.
	Vertices() []Vertex
	// Report is the attempt's figures now (metrics, checkpoints, plan),
	// encoded by the program and opaque to the cluster: the TaskManager
	// sends it to the JobManager every heartbeat interval and once more
	// when the attempt ends, and the JobManager keeps the latest of each
	// attempt for the program's view (JobManager.Reports); of a spread
	// attempt, each share's (AttemptReport.Shares).
	Report() []byte
}

// AttemptReport is the latest Report of one attempt of a job. Of an
// attempt spread over several TaskManagers, Data is the first share's and
// Shares holds every share's latest, by share (nil for one that sent
// none yet): the program's view merges them.
type AttemptReport struct {
	Attempt string
	Data    []byte
	Shares  [][]byte
}

// Program is a user's program as a cluster runs it: the same binary is
// the JobManager, which checks and names the jobs submitted, and the
// TaskManagers, which run them.
type Program interface {
	// Check validates a submission's arguments and returns the job's
	// name and the slots it asks for (its parallelism; 0: as many as a
	// TaskManager has free). It runs on the JobManager and must not start
	// anything.
	Check(args []string) (name string, slots int, err error)
	// Run runs the job args name until it ends or ctx ends, checkpointing
	// into env.CheckpointDir through env.Gate. It returns nil when the job
	// finished. An error with a method Unrecoverable() bool that returns
	// true (stream.Unrecoverable's, a bad argument's) fails the job
	// without restarts.
	Run(ctx context.Context, args []string, env Env) error
}
