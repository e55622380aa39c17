// Package jobmanager is a weir cluster's JobManager: it registers
// TaskManagers over gRPC (cluster/internal/rpc), schedules each job
// submitted onto the free slots of one TaskManager, or spreads it over
// several when the program allows (cluster.Spreader) and no one
// TaskManager has the slots it asks for, records the job and
// its latest checkpoint in the HA store (cluster/ha; in memory without
// HA), restarts a job whose attempt failed or whose TaskManager was lost,
// rescales a job up when slots come back (reactive mode), and serves the
// REST API (cluster/rest) as its rest.Cluster.
//
// # Model
//
// New listens; Run campaigns for leadership and, once leading, recovers
// the jobs the HA store holds (a standby taking over) and runs what is
// submitted. A job is CREATED while it waits for slots, RUNNING while an
// attempt is deployed, RESTARTING between a failure (or a rescale) and the
// next attempt, and ends FINISHED, CANCELED or FAILED (after
// RestartAttempts restarts, Flink's fixed-delay strategy), when it is
// removed from the HA store. Attempts are named <epoch>-<n>; each gets its
// own checkpoint directory under Options.CheckpointDir and the job's
// latest recorded checkpoint to restore. The first checkpoint an attempt
// records removes the directories of the job's other attempts; a job
// ending FINISHED or CANCELED loses its directory, a FAILED one keeps it.
//
// # Spread attempts
//
// A spread attempt has a share on each of the TaskManagers with a data
// address, the most free slots first, until the slots the job asks for;
// every share gets the same arguments and its placement (rpc.Spread: its
// part, each share's slots and data address). The attempt finishes when
// every share reported FINISHED, and the first share's standard output is
// the job's. A share that fails or is canceled, or whose TaskManager is
// lost, ends the attempt with that failure: the JobManager asks the other
// shares' TaskManagers to cancel theirs, and the restart strategy
// decides as for any attempt (the next attempt is placed afresh, spread
// or not). The slots of all shares return when the attempt ends.
//
// # Reactive mode
//
// A job running at fewer slots than it asked for (asking 0, at fewer than
// one TaskManager now offers) is rescaled up when slots come back: a
// TaskManager registers, or slots free up, on its own TaskManager too.
// Once one TaskManager could hold the job at more slots (its free slots,
// plus the job's own on its own TaskManager) and that stayed so for
// Options.RescaleStabilization (2 s), the JobManager waits for the
// attempt's next recorded checkpoint (at most Options.RescaleCheckpointWait:
// by default 1.5 times the time between its last two checkpoints, no wait
// before it recorded two), cancels the attempt and, when its TaskManager
// reports it ended, deploys the next one at once (no restart counted, no
// restart delay) on the TaskManager with the most free slots, restoring
// the job's latest recorded checkpoint, which is then the one taken after
// the slots came: Flink's reactive mode with the adaptive scheduler's
// resource stabilization and its rescale on checkpoint (FLIP-461). It
// is on by default; a negative RescaleStabilization turns it off. Slots
// going away rescale a job down through the restart of its failed attempt.
// A job is not rescaled while
//
//   - its current attempt has recorded no checkpoint of its own: the next
//     attempt would restore an older one, or start over, and redo the work
//     since. This spaces two rescales by a checkpoint at least, and leaves
//     alone the jobs that do not checkpoint (batch jobs), which only a
//     failure restarts;
//   - its attempt takes a savepoint or stops with one;
//   - another job waits for slots: that job goes first.
//
// Each job keeps the latest Report (cluster.Control) of each of its
// attempts, unread: Reports hands them to the program's view, and
// Options.Handler lets the process serve that view on the REST address
// (the weir CLI's: the web UI and /metrics through cluster/view).
//
// # Contracts
//
//   - Gate records a checkpoint (SetCheckpoint at the leader's epoch) only
//     for the job's current attempt, at the current epoch, while this
//     JobManager leads; the next attempt's restore is read under the same
//     lock, so no stale attempt records a checkpoint after it.
//   - A directory holding the recorded pointer is never removed: pruning
//     runs under the job's gate, after its own attempt's checkpoint was
//     recorded, and keeps that attempt's directory.
//   - A TaskManager is lost when its stream breaks or it was silent for
//     HeartbeatTimeout on Options.Clock; its attempts fail at once.
//   - A rescale deploys the next attempt only once the TaskManager
//     reported the canceled one ended, or was declared lost (it then
//     cancels the attempt itself after the timeout).
//   - Run returns an error when the leadership is lost: the process must
//     exit and a standby takes over.
//   - A Report is kept only from the attempt its TaskManager runs for the
//     job now; a job keeps those of its last 64 attempts.
//   - Without leadership every rest.Cluster method returns
//     rest.ErrNotLeader (the REST server forwards to Leader).
package jobmanager
