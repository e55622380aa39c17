// Package cluster is the model and the contracts of weir on a cluster:
// one JobManager (with standbys under high availability) and
// TaskManagers, processes started by whatever the user runs (Kubernetes,
// systemd, a shell), all of one binary.
//
// # Model
//
// Application mode: Go cannot ship code to a running process, so the
// user's program binary is both the JobManager (cluster/jobmanager) and
// the TaskManagers (cluster/taskmanager); the weir binary is one such
// program (weir jobmanager, weir taskmanager), whose jobs are those of
// weir run and weir tpch. A job is submitted as the arguments its command
// line would take; the JobManager checks them with Program.Check and a
// TaskManager runs them with Program.Run.
//
// A job asks for its parallelism in slots. It runs in one TaskManager
// when one has the free slots, at min(that, the free slots of the
// TaskManager with the most); a restore from a checkpoint taken at
// another parallelism rescales the state (reactive scaling on restart).
// A job whose Program says it spreads (Spreader: the weir binary's batch
// jobs, and its stream jobs that write to --output) and that no one
// TaskManager can hold runs
// spread: its attempt has a share on each of several TaskManagers (the
// ones with the most free slots first, up to the slots it asks for), each
// share runs the subtasks of its slots, and the shares exchange records
// over the TaskManagers' data plane (cluster/dataplane over
// cluster/shuffle, at the data address each registered). A spread
// attempt ends when every share finished; one share failing, or its
// TaskManager lost, fails the attempt and the others are canceled.
//
// Each attempt of a job checkpoints into a directory of its own
// (<checkpoint dir>/<job id>/<epoch>-<n>, a directory all processes see
// or an s3:// URL) and starts from the latest checkpoint the JobManager
// recorded for the job. The JobManager records it in the gate: Env.Gate,
// called after a checkpoint's metadata is stored and before the
// checkpoint completes (stream.CheckpointConfig.CompletionGate), so a
// sink commits only what the JobManager will restore from.
//
// # Contracts
//
//   - Build fingerprint: a TaskManager registers with Own (module,
//     version, VCS revision, SHA-256 of the executable); a JobManager
//     refuses one unlike its own with an error naming both
//     (CheckFingerprint), and the TaskManager exits.
//   - Epochs: every JobManager message carries its leadership's epoch; a
//     TaskManager refuses a message of an epoch older than the largest it
//     has seen, and the JobManager records a checkpoint only from the
//     current attempt of a job, at its current epoch, while it leads.
//   - Failure detection: each side sends a heartbeat every second; a
//     TaskManager silent for the timeout (5 s), or whose stream broke, is
//     lost and its jobs restart from their latest checkpoint on the slots
//     left, waiting while none are free. A TaskManager that does not hear
//     from its JobManager for the timeout cancels its jobs: a partitioned
//     TaskManager commits nothing more, as its gate is refused anyway.
//   - A Program's Run returns nil when the job finished, an error when it
//     failed or its context ended; it runs without restarts of its own
//     (the JobManager's restart strategy decides).
package cluster
