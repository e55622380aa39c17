package rest

import (
	"context"
	"errors"
)

// ErrNotFound is returned by a Cluster for a job it does not know: the
// server answers 404.
var ErrNotFound = errors.New("rest: not found")

// ErrConflict is returned by a Cluster for a request the job's state does
// not allow (cancelling a finished job, stopping a job without
// checkpoints): the server answers 409.
var ErrConflict = errors.New("rest: conflict")

// ErrNotLeader is returned by a Cluster whose JobManager does not lead: the
// server forwards the request to Cluster.Leader's REST address.
var ErrNotLeader = errors.New("rest: not the leader")

// ErrInvalid is returned by a Cluster for a request it cannot take as
// given (a submission's bad arguments, no savepoint directory): the server
// answers 400.
var ErrInvalid = errors.New("rest: invalid request")

// Job states, Flink's JobStatus names.
const (
	StateInitializing = "INITIALIZING"
	StateCreated      = "CREATED"
	StateRunning      = "RUNNING"
	StateFailing      = "FAILING"
	StateFailed       = "FAILED"
	StateCancelling   = "CANCELLING"
	StateCanceled     = "CANCELED"
	StateFinished     = "FINISHED"
	StateRestarting   = "RESTARTING"
	StateSuspended    = "SUSPENDED"
)

// Overview is GET /overview.
type Overview struct {
	TaskManagers   int    `json:"taskmanagers"`
	SlotsTotal     int    `json:"slots-total"`
	SlotsAvailable int    `json:"slots-available"`
	JobsRunning    int    `json:"jobs-running"`
	JobsFinished   int    `json:"jobs-finished"`
	JobsCancelled  int    `json:"jobs-cancelled"`
	JobsFailed     int    `json:"jobs-failed"`
	IsLeader       bool   `json:"is-leader"`
	Version        string `json:"flink-version"`
	Commit         string `json:"flink-commit"`
}

// Ended says whether a job in state s has ended: FINISHED, CANCELED or
// FAILED (Flink's globally terminal states).
func Ended(s string) bool { return s == StateFinished || s == StateCanceled || s == StateFailed }

// CountJob counts a job in state s: finished, cancelled, failed, or else
// running (Flink's overview counts a job not yet ended as running).
func (o *Overview) CountJob(s string) {
	switch s {
	case StateFinished:
		o.JobsFinished++
	case StateCanceled:
		o.JobsCancelled++
	case StateFailed:
		o.JobsFailed++
	default:
		o.JobsRunning++
	}
}

// JobOverview is one entry of GET /jobs/overview.
type JobOverview struct {
	ID    string `json:"jid"`
	Name  string `json:"name"`
	State string `json:"state"`
	// Start and End are Unix milliseconds; End is -1 while the job runs.
	Start int64 `json:"start-time"`
	End   int64 `json:"end-time"`
	// Duration is in milliseconds, up to now while the job runs.
	Duration         int64 `json:"duration"`
	LastModification int64 `json:"last-modification"`
}

// Vertex is one vertex of GET /jobs/:jid.
type Vertex struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Parallelism int    `json:"parallelism"`
	Status      string `json:"status"`
	Start       int64  `json:"start-time"`
	End         int64  `json:"end-time"`
	Duration    int64  `json:"duration"`
	// Metrics are the vertex's figures now; nil when the cluster has none.
	Metrics *VertexMetrics `json:"metrics,omitempty"`
}

// VertexMetrics are a vertex's figures, summed over its subtasks: Flink's
// records and bytes read and written, and weir's rates, shares of time
// (0 to 1, averaged over the running subtasks, as Flink's web UI colours
// busy and backpressured vertices) and low watermark (Unix milliseconds,
// absent before the first and after the last).
type VertexMetrics struct {
	ReadRecords        int64   `json:"read-records"`
	WriteRecords       int64   `json:"write-records"`
	ReadBytes          int64   `json:"read-bytes"`
	WriteBytes         int64   `json:"write-bytes"`
	ReadRecordsPerSec  float64 `json:"read-records-per-second"`
	WriteRecordsPerSec float64 `json:"write-records-per-second"`
	Busy               float64 `json:"busy-ratio"`
	Idle               float64 `json:"idle-ratio"`
	Backpressured      float64 `json:"backpressured-ratio"`
	Watermark          *int64  `json:"watermark,omitempty"`
}

// Plan is a job's graph, Flink's JobPlanInfo: its nodes are the vertices
// (same ids), each with the vertices it reads from.
type Plan struct {
	JID   string     `json:"jid"`
	Name  string     `json:"name"`
	Type  string     `json:"type"` // STREAMING or BATCH
	Nodes []PlanNode `json:"nodes"`
}

// PlanNode is one vertex of a Plan.
type PlanNode struct {
	ID          string      `json:"id"`
	Parallelism int         `json:"parallelism"`
	Operator    string      `json:"operator"`
	Description string      `json:"description"`
	Inputs      []PlanInput `json:"inputs,omitempty"`
}

// PlanInput is an input of a PlanNode: the vertex id it reads and how
// records are partitioned (Flink's ship_strategy: FORWARD, REBALANCE,
// HASH, BROADCAST, SHUFFLE).
type PlanInput struct {
	Num          int    `json:"num"`
	ID           string `json:"id"`
	ShipStrategy string `json:"ship_strategy"`
	Exchange     string `json:"exchange"`
}

// JobDetails is GET /jobs/:jid.
type JobDetails struct {
	JobOverview
	IsStoppable bool     `json:"isStoppable"`
	Now         int64    `json:"now"`
	Vertices    []Vertex `json:"vertices"`
	// Plan is the job's graph; nil when the cluster has none.
	Plan *Plan `json:"plan,omitempty"`
	// Failure is why a FAILED job failed (weir's field).
	Failure string `json:"failure-cause,omitempty"`
	// Memory is the job's managed memory (weir's field); nil when the
	// cluster does not know it.
	Memory *JobMemory `json:"memory,omitempty"`
}

// JobMemory is a job's managed memory in bytes: its budget (0:
// unbounded), what its operators hold now and the most they held.
type JobMemory struct {
	Budget int64 `json:"budget"`
	Used   int64 `json:"used"`
	Peak   int64 `json:"peak"`
}

// CheckpointCounts are the counts of GET /jobs/:jid/checkpoints.
type CheckpointCounts struct {
	Restored   int `json:"restored"`
	Total      int `json:"total"`
	InProgress int `json:"in_progress"`
	Completed  int `json:"completed"`
	Failed     int `json:"failed"`
}

// CompletedCheckpoint is a completed checkpoint or savepoint.
type CompletedCheckpoint struct {
	ID                 int64  `json:"id"`
	Status             string `json:"status"`
	IsSavepoint        bool   `json:"is_savepoint"`
	TriggerTimestamp   int64  `json:"trigger_timestamp"`
	LatestAckTimestamp int64  `json:"latest_ack_timestamp"`
	ExternalPath       string `json:"external_path"`
}

// RestoredCheckpoint is the checkpoint the job's latest attempt started from.
type RestoredCheckpoint struct {
	ID               int64  `json:"id"`
	RestoreTimestamp int64  `json:"restore_timestamp"`
	IsSavepoint      bool   `json:"is_savepoint"`
	ExternalPath     string `json:"external_path"`
}

// LatestCheckpoints is the latest of GET /jobs/:jid/checkpoints; a nil
// entry is JSON null.
type LatestCheckpoints struct {
	Completed *CompletedCheckpoint `json:"completed"`
	Savepoint *CompletedCheckpoint `json:"savepoint"`
	Restored  *RestoredCheckpoint  `json:"restored"`
}

// CheckpointStats is one entry of a Checkpoints' history, Flink's
// checkpoint statistics: sizes in bytes, durations in milliseconds.
type CheckpointStats struct {
	ID                 int64  `json:"id"`
	Status             string `json:"status"`
	IsSavepoint        bool   `json:"is_savepoint"`
	TriggerTimestamp   int64  `json:"trigger_timestamp"`
	LatestAckTimestamp int64  `json:"latest_ack_timestamp"`
	EndToEndDuration   int64  `json:"end_to_end_duration"`
	CheckpointedSize   int64  `json:"checkpointed_size"`
	StateSize          int64  `json:"state_size"`
	Alignment          int64  `json:"alignment_duration"`
	PersistedData      int64  `json:"persisted_data"`
	ExternalPath       string `json:"external_path"`
}

// Checkpoints is GET /jobs/:jid/checkpoints.
type Checkpoints struct {
	Counts CheckpointCounts  `json:"counts"`
	Latest LatestCheckpoints `json:"latest"`
	// History is the checkpoints, newest first, as Flink lists them; nil
	// when the cluster keeps none.
	History []CheckpointStats `json:"history,omitempty"`
}

// TaskManager is one entry of GET /taskmanagers.
type TaskManager struct {
	ID                     string   `json:"id"`
	Path                   string   `json:"path"`
	DataPort               int      `json:"dataPort"`
	TimeSinceLastHeartbeat int64    `json:"timeSinceLastHeartbeat"`
	SlotsNumber            int      `json:"slotsNumber"`
	FreeSlots              int      `json:"freeSlots"`
	Hardware               Hardware `json:"hardware"`
}

// Hardware is a TaskManager's hardware, Flink's fields: its cores and
// its managed memory in bytes (weir's --memory budget, 0 when it has
// none).
type Hardware struct {
	CPUCores      int   `json:"cpuCores"`
	ManagedMemory int64 `json:"managedMemory"`
}

// Exceptions is GET /jobs/:jid/exceptions, Flink's
// JobExceptionsInfoWithHistory: the latest failure as the root exception,
// and the failures of the job's attempts, newest first.
type Exceptions struct {
	RootException string           `json:"root-exception,omitempty"`
	Timestamp     int64            `json:"timestamp,omitempty"`
	Truncated     bool             `json:"truncated"`
	History       ExceptionHistory `json:"exceptionHistory"`
}

// ExceptionHistory is the history of an Exceptions; Truncated says older
// entries were dropped.
type ExceptionHistory struct {
	Entries   []Exception `json:"entries"`
	Truncated bool        `json:"truncated"`
}

// Exception is one failure of a job's attempt: the error's text (Go
// errors carry no stack: the stack trace is the message), when it came
// (Unix milliseconds), and where: the TaskManager's id and address.
type Exception struct {
	Name          string `json:"exceptionName"`
	Stacktrace    string `json:"stacktrace"`
	Timestamp     int64  `json:"timestamp"`
	TaskManagerID string `json:"taskManagerId,omitempty"`
	Location      string `json:"location,omitempty"`
}

// NewExceptions returns the Exceptions of failures, oldest first, of
// which older ones were dropped when truncated.
func NewExceptions(failures []Exception, truncated bool) Exceptions {
	e := Exceptions{Truncated: truncated, History: ExceptionHistory{Entries: []Exception{}, Truncated: truncated}}
	for i := len(failures) - 1; i >= 0; i-- {
		e.History.Entries = append(e.History.Entries, failures[i])
	}
	if n := len(failures); n > 0 {
		e.RootException, e.Timestamp = failures[n-1].Stacktrace, failures[n-1].Timestamp
	}
	return e
}

// JobResult is GET /jobs/:jid/execution-result, Flink's
// JobExecutionResultResponseBody: status IN_PROGRESS until the job ends,
// then COMPLETED with the result.
type JobResult struct {
	Status QueueStatus      `json:"status"`
	Result *ExecutionResult `json:"job-execution-result,omitempty"`
}

// QueueStatus is an asynchronous operation's status, Flink's: ID is
// StatusInProgress or StatusCompleted.
type QueueStatus struct {
	ID string `json:"id"`
}

// Application statuses of an ExecutionResult, Flink's ApplicationStatus.
const (
	AppSucceeded = "SUCCEEDED"
	AppFailed    = "FAILED"
	AppCanceled  = "CANCELED"
)

// ExecutionResult is an ended job's result: how it ended, its run time in
// milliseconds, why it failed, and (weir's fields) the standard output of
// the attempt that finished, as bytes (base64 in JSON), with the bytes
// past cluster.MaxStdout that were not kept. Accumulators is always
// empty: weir's jobs have none.
type ExecutionResult struct {
	ID                string            `json:"id"`
	ApplicationStatus string            `json:"application-status"`
	Accumulators      map[string]string `json:"accumulator-results"`
	NetRuntime        int64             `json:"net-runtime"`
	Failure           *FailureCause     `json:"failure-cause,omitempty"`
	Stdout            []byte            `json:"stdout"`
	StdoutDropped     int64             `json:"stdout-dropped"`
}

// FailureCause is why a job failed, Flink's serialized throwable without
// the Java serialization: the error's text is its stack trace.
type FailureCause struct {
	Class      string `json:"class"`
	StackTrace string `json:"stack-trace"`
}

// NewJobResult returns the JobResult of job jid in state (a Flink job
// state) after runtime milliseconds: in progress until the state ends.
func NewJobResult(jid, state string, runtime int64, failure string, stdout []byte, dropped int64) JobResult {
	if !Ended(state) {
		return JobResult{Status: QueueStatus{ID: StatusInProgress}}
	}
	r := &ExecutionResult{ID: jid, Accumulators: map[string]string{}, NetRuntime: runtime, Stdout: stdout, StdoutDropped: dropped}
	switch state {
	case StateFinished:
		r.ApplicationStatus = AppSucceeded
	case StateCanceled:
		r.ApplicationStatus = AppCanceled
	default:
		r.ApplicationStatus = AppFailed
		r.Failure = &FailureCause{Class: "weir.JobFailure", StackTrace: failure}
	}
	return JobResult{Status: QueueStatus{ID: StatusCompleted}, Result: r}
}

// Submission is the body of POST /jobs: a job of the cluster's program,
// named by the arguments its command line would take.
type Submission struct {
	Args []string `json:"args"`
}

// Savepoint is the state of an asynchronous savepoint or stop request,
// GET /jobs/:jid/savepoints/:triggerid.
type Savepoint struct {
	// Status is IN_PROGRESS or COMPLETED (Flink's queue status).
	Status string
	// Location is the savepoint's path once completed; Failure why it
	// failed.
	Location string
	Failure  string
}

// Savepoint queue statuses, Flink's QueueStatus.Id.
const (
	StatusInProgress = "IN_PROGRESS"
	StatusCompleted  = "COMPLETED"
)

// Cluster is what the REST server serves: a JobManager. Its methods are
// safe for concurrent use.
type Cluster interface {
	Overview(ctx context.Context) (Overview, error)
	Jobs(ctx context.Context) ([]JobOverview, error)
	Job(ctx context.Context, jid string) (JobDetails, error)
	Checkpoints(ctx context.Context, jid string) (Checkpoints, error)
	// Exceptions answers the failures of job jid's attempts.
	Exceptions(ctx context.Context, jid string) (Exceptions, error)
	// Result answers how job jid ended, and its output.
	Result(ctx context.Context, jid string) (JobResult, error)
	TaskManagers(ctx context.Context) ([]TaskManager, error)
	// Submit starts a job and returns its id.
	Submit(ctx context.Context, s Submission) (string, error)
	Cancel(ctx context.Context, jid string) error
	// TriggerSavepoint starts a savepoint of job jid under dir, and with
	// stop, stops the job with it (POST /jobs/:jid/stop). It returns the
	// trigger id that Savepoint answers for.
	TriggerSavepoint(ctx context.Context, jid, dir string, stop bool) (string, error)
	Savepoint(ctx context.Context, jid, trigger string) (Savepoint, error)
	// Leader returns the leading JobManager's REST base URL
	// (http://host:port) for forwarding; "" when no JobManager leads.
	Leader(ctx context.Context) (string, error)
}
