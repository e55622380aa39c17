// Package prometheus exposes running jobs' metrics in Prometheus' text
// format under Flink's metric names, as Flink's PrometheusReporter does.
//
// # Model
//
// An Exporter holds jobs (Add, Remove, and the jobs a listing returns at
// each scrape: List) and is a prometheus.Collector: at each scrape it
// reads every job's Overview and Checkpoints and turns them into metrics. Names are Flink's scope joined to the metric's name with
// underscores, labels Flink's scope variables:
//
//   - job scope, flink_jobmanager_job_*, labels job_id and job_name:
//     uptime, numRestarts, numberOfCompletedCheckpoints,
//     numberOfFailedCheckpoints,
//     lastCheckpointDuration, lastCheckpointSize, lastCheckpointFullSize,
//     lastCheckpointAlignmentDuration (weir);
//   - task scope, flink_taskmanager_job_task_*, also task_name (the
//     vertex) and subtask_index: numRecordsIn, numRecordsOut, numBytesIn,
//     numBytesOut, numRecordsInPerSecond, numRecordsOutPerSecond,
//     busyTimeMsPerSecond, idleTimeMsPerSecond,
//     backPressuredTimeMsPerSecond, currentInputWatermark, currentOutputWatermark, watermarkLag
//     (weir), spilledBytes and peakMemoryBytes (weir);
//   - managed memory, flink_taskmanager_Status_Flink_Memory_Managed_*,
//     labels job_id and job_name (each job has its own budget): Total,
//     the budget (absent when unbounded), and Used, what the job's
//     operators hold now;
//   - operator scope, flink_taskmanager_job_task_operator_*, also
//     operator_name: numRecordsIn, numRecordsOut, and the user metrics of
//     package metrics under their group names (a counter as a counter, a
//     gauge as a gauge, a meter as <name> (its rate) and <name>_count, a
//     histogram as a summary of its reservoir's quantiles).
//
// Characters Prometheus does not allow in a name become underscores.
//
// # Contracts
//
//   - Counters only grow within an attempt of a job; a restore restarts
//     them at zero, as Flink's do.
//   - The ...MsPerSecond and ...PerSecond gauges are measured per subtask
//     between two scrapes of the same Exporter (from the subtask's start
//     at the first, and at the first after a restart): the busy, idle and
//     backpressured milliseconds per second of the subtask's wall time
//     over that span, and the records read and written per second of it.
//   - An Exporter is safe for concurrent use; a scrape never blocks a
//     job's tasks (it reads the counters the tasks publish).
package prometheus
