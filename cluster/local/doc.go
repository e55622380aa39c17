// Package local is a rest.Cluster over the stream jobs of this process: what
// `weir run <job> --web-ui` serves through the REST API while its job runs.
//
// # Model
//
// A Cluster holds the jobs Add gave it, in the order they came, each with
// its name and, when known, its plan (stream.Plan). The process is the one
// TaskManager; its slots are Options.Slots (the parallelism), all taken
// while a job runs. Each answer is read from the jobs at the call:
//
//   - Job: Flink's state from stream.Job.Status (CANCELLING once Cancel
//     was asked of a job still running), the vertices of the job's
//     Overview in its order, each with its parallelism, status (FINISHED
//     once every subtask ended, else RUNNING; a job that failed or was
//     cancelled gives its state to the vertices that did not finish) and
//     metrics (records, bytes, rates, busy, idle and backpressured shares,
//     low watermark), and the plan's tasks as Flink's plan nodes with the
//     partitioned edges as inputs. Vertex ids are 32 hex digits derived
//     from the job id and the vertex's position.
//   - Checkpoints: stream.Job.Checkpoints' completed and failed
//     checkpoints (counts, the latest, the history newest first, through
//     cluster/view's conversions) and the savepoints taken
//     through TriggerSavepoint (latest.savepoint).
//   - TriggerSavepoint runs stream.Job.TriggerSavepoint, or with stop
//     StopWithSavepoint, in its own goroutine and returns at once a trigger
//     id of 32 random hex digits; Savepoint answers IN_PROGRESS until it
//     returned, then COMPLETED with its location or its failure. A stop
//     that wrote its savepoint calls Options.Stopped.
//
// # Contracts
//
//   - Unknown job or trigger ids are rest.ErrNotFound; Cancel of an ended
//     job, a savepoint of a job that does not run or does not checkpoint,
//     and a second savepoint while one is in progress are rest.ErrConflict;
//     a savepoint without a directory (the request's, else
//     Options.SavepointDir) is rest.ErrInvalid.
//   - Submit is always rest.ErrInvalid: an embedded process runs its own
//     job. Leader is "" and no method returns rest.ErrNotLeader.
//   - Times are Unix milliseconds of Options.Now: a job starts at Add and
//     ends when its Done channel closes (seen by a goroutine that Close
//     stops). After its end a job's final state and figures stay served.
//   - WaitSavepoints waits for the savepoints in progress (a command that
//     saw its job end calls it before it reports a stop's savepoint).
//   - Close cancels the savepoints in progress and waits for every
//     goroutine the Cluster started. Methods are safe for concurrent use.
package local
