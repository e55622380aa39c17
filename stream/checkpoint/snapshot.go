package checkpoint

// Kind tells a checkpoint from a savepoint.
type Kind uint8

const (
	// Checkpoint is taken by the job on its interval, for recovery. The
	// storage owns it: it is discarded once newer ones are retained.
	Checkpoint Kind = iota
	// Savepoint is taken on request (stop-with-savepoint) and owned by the
	// user: self-contained and never discarded by the storage.
	Savepoint
)

func (k Kind) String() string {
	if k == Savepoint {
		return "savepoint"
	}
	return "checkpoint"
}

// Snapshot is a completed checkpoint or savepoint of a job.
type Snapshot struct {
	// ID numbers the job's checkpoints from 1, savepoints included.
	ID   int64
	Kind Kind
	// Timestamp is when the checkpoint was triggered, in Unix milliseconds.
	Timestamp int64
	// Finished says the job's input had ended and its sinks committed
	// everything when the snapshot was taken: a job restored from it has
	// nothing left to do.
	Finished bool
	// Fingerprint identifies the job that took the snapshot (its name,
	// inputs and operator ids, hashed by the runtime); empty when unknown.
	// A restore from a checkpoint storage refuses another job's.
	Fingerprint string
	// Operators are the job's stateful operators, in the job's order.
	Operators []OperatorState
}

// OperatorState is the state of one operator of a Snapshot.
type OperatorState struct {
	// ID is the operator's stable id: set by the program, or derived from
	// the job graph. A restore maps state to operators by it.
	ID string
	// Name is the operator's name, for messages and inspection.
	Name string
	// Kind is what the operator is ("KeyedProcess", "Window(Reduce)",
	// "FileSink", a source's ...): a restore refuses state of another kind
	// of operator. Empty in snapshots that did not record it.
	Kind string
	// Parallelism is the number of subtasks that wrote Subtasks.
	Parallelism int
	// MaxParallelism is the number of key groups of the operator's keyed
	// state. It cannot change across a restore.
	MaxParallelism int
	// Finished says every subtask of the operator had finished when the
	// snapshot was taken (Flink's FullyFinishedOperatorState, FLIP-147): a
	// job restored from it does not run the operator again.
	Finished bool
	// Coordinator is the state of the operator's coordinator, for a source
	// its split enumerator's. Nil for other operators.
	Coordinator []byte
	// Subtasks are the subtasks' states, indexed by subtask; len(Subtasks)
	// is Parallelism.
	Subtasks []SubtaskState
}

// SubtaskState is the state of one subtask of an operator.
type SubtaskState struct {
	// State is what the subtask's operator wrote on the barrier.
	State []byte
	// InFlight are the records the subtask's inputs held between the
	// barrier and the data it overtook (unaligned checkpoints), as the
	// runtime wrote them. Nil for aligned checkpoints.
	InFlight []byte
	// Shared names files of the storage's shared directory the State refers
	// to (incremental snapshots). The storage keeps a shared file while a
	// retained snapshot names it and removes it after.
	Shared []string
	// Watermark is the subtask's event-time watermark when it snapshotted
	// (math.MinInt64 for none): a restore starts the operator there, so
	// that a record late before a failure is late after it.
	Watermark int64
}

// Operator returns the state of the operator with stable id id, or nil.
func (s *Snapshot) Operator(id string) *OperatorState {
	for i := range s.Operators {
		if s.Operators[i].ID == id {
			return &s.Operators[i]
		}
	}
	return nil
}

// Size returns the bytes of state the snapshot holds inline (State,
// InFlight and Coordinator), without shared files.
func (s *Snapshot) Size() int64 {
	var n int64
	for _, op := range s.Operators {
		n += int64(len(op.Coordinator))
		for _, st := range op.Subtasks {
			n += int64(len(st.State) + len(st.InFlight))
		}
	}
	return n
}
