// Package view turns stream jobs into what the REST API and the metrics
// show: the figures a running attempt reports to its JobManager, and the
// JobManager's answers filled with them.
//
// # Model
//
// A stream job's attempt on a TaskManager encodes a Report (Encode): its
// stream.Overview, its checkpoint history and its plan, as JSON. The
// TaskManager sends it to the JobManager every heartbeat interval and with
// the attempt's end; the JobManager keeps the latest of each attempt
// without reading it (cluster.AttemptReport), of a spread attempt each
// share's. A Cluster wraps the JobManager (a Source) and decodes them, a
// spread attempt's merged over its shares (each subtask's metrics from the
// share that runs it, the records summed; the checkpoints the first
// share's):
//
//   - Job: each vertex's metrics from the current attempt's Overview (the
//     latest attempt that reported), the plan's tasks as Flink's plan
//     nodes under the vertices' ids;
//   - Checkpoints: the history of every attempt's completed checkpoints,
//     newest first, and the failed ones counted.
//
// Jobs lists the Source's jobs that have not ended as metrics/prometheus
// jobs: uptime from the submission, restarts as the JobManager counts
// them, the checkpoints of all attempts, the current attempt's Overview.
//
// The conversions from stream's types to the REST API's (VertexMetrics,
// Plan, History) serve the embedded process's cluster (cluster/local) too.
//
// # Contracts
//
//   - A Report that does not decode is ignored: the answer is the
//     JobManager's alone, as before any report.
//   - Errors of the Source (rest.ErrNotLeader, rest.ErrNotFound) are
//     returned as they are, so the REST server forwards or answers 404.
//   - Counters restart at zero with each attempt (Flink's do too); the
//     checkpoint history does not.
package view
