// Package coordinator is the checkpoint coordinator of a stream job
// attempt (Flink's CheckpointCoordinator), the valves of its sources'
// split enumerators (Flink's OperatorEventValve), the watermark alignment
// of its sources (the alignment part of Flink's SourceCoordinator), and
// the assignment of a
// snapshot's state to the subtasks of a job that restores from it
// (Flink's StateAssignmentOperation).
//
// # Model
//
// A Coordinator knows its attempt's Topology: the tasks (by the stable id
// of their head operator, with their parallelism and the operators of
// their chain) and the stateful operators in program order. It talks to
// the tasks only through the messages of package protocol: it triggers
// checkpoint n at the source tasks (after snapshotting the enumerators
// with their valves closed), collects one Ack per running subtask (a task
// that finished counts as acknowledged, FLIP-147), stores the checkpoint
// in its checkpoint.Storage on its own goroutine, and tells every task it
// completed. A task whose inputs ended but that runs on (an iteration
// head) says so (InputsEnded) and is triggered as a source from then on. A checkpoint not complete within its timeout, or declined by
// a task, is aborted; so are the pending ones when the attempt ends.
//
//	Run ──every Interval──▶ trigger n: enumerators snapshotted, valves closed,
//	                        Trigger{n} to each source subtask
//	task ──Ack{n}──────────▶ pending n (a source's Ack opens its valve)
//	all acked ─────────────▶ store n ─▶ Config.Gate(n) ─▶ Complete{n} to every task
//
// A Gate that refuses a stored checkpoint aborts it (Abort{n} to every
// task) and fails the attempt, whatever TolerableFailures says.
//
// Assign maps a snapshot onto a topology by stable operator id: keyed
// state by key group, operator state redistributed, and each subtask's
// starting watermark the least of the old subtasks' whose state it takes.
//
// Alignment holds, per alignment group, each aligned source's combined
// watermark (the least its subtasks reported in protocol.ReportedWatermark,
// Max for an idle or ended subtask). A SourceAlignment recomputes both on
// every report and, when its update interval passed since it last did,
// announces protocol.WatermarkAlignment{least of the group + max drift}
// to the subtasks that reported. It runs no goroutine: its subtasks report
// every interval, and each report may announce.
package coordinator
