// Package rest is a JobManager's REST API: Flink's paths and JSON field
// names over a Cluster, the handler that serves them (NewHandler) and a
// client that is a Cluster over HTTP (NewClient).
//
// # Model
//
// A Cluster is what a JobManager knows: its overview, its jobs, their
// checkpoints, its TaskManagers, and the requests it takes (submit,
// cancel, savepoint, stop). The handler maps each path onto one Cluster
// method and each answer onto Flink's JSON:
//
//	GET   /                                    {"name", "paths"}: this index
//	GET   /overview                            Overview
//	GET   /jobs                                {"jobs": [{"id", "status"}]}
//	GET   /jobs/overview                       {"jobs": [JobOverview]}
//	POST  /jobs             Submission         202 {"jid", "jobUrl": "/jobs/<jid>"}
//	GET   /jobs/:jobid                         JobDetails
//	PATCH /jobs/:jobid?mode=cancel             202 {}
//	GET   /jobs/:jobid/checkpoints             Checkpoints
//	GET   /jobs/:jobid/exceptions              Exceptions
//	GET   /jobs/:jobid/execution-result        JobResult
//	POST  /jobs/:jobid/stop  {"targetDirectory", "drain"}
//	                                           202 {"request-id"}
//	POST  /jobs/:jobid/savepoints  {"target-directory", "cancel-job"}
//	                                           202 {"request-id"}
//	GET   /jobs/:jobid/savepoints/:triggerid   {"status": {"id"}, "operation"}
//	GET   /taskmanagers                        {"taskmanagers": [TaskManager]}
//
// A savepoint's "status.id" is IN_PROGRESS (with "operation": null) or
// COMPLETED, with "operation.location", or "operation.failure-cause"
// ({"class", "stack-trace"}, the fields of Flink's SerializedThrowable a Go
// error has) when it failed. A stop is TriggerSavepoint with stop true, a
// savepoint with "cancel-job" too; "drain" is refused (400).
//
// An execution result's "status.id" is IN_PROGRESS until the job ends,
// then COMPLETED with "job-execution-result": Flink's "id",
// "application-status" (SUCCEEDED, FAILED or CANCELED),
// "accumulator-results" (always {}), "net-runtime" and "failure-cause",
// and weir's "stdout": the standard output of the attempt that finished,
// base64 as JSON carries bytes, its first cluster.MaxStdout bytes, with
// "stdout-dropped" the bytes past them. `weir run --jobmanager` prints it.
//
// # Contracts
//
//   - Ids: job and trigger ids are 32 hexadecimal digits (Flink's JobID and
//     TriggerId); another id is 400, and the Cluster sees ids in lower case.
//   - Errors: every answer but 2xx is Flink's {"errors": [message]}. A
//     Cluster's ErrNotFound is 404, ErrConflict 409, ErrInvalid 400, a
//     cancelled or expired context 503, any other error 500; a request
//     body that does not decode (strictly: unknown fields are refused) is
//     400, an unknown path or method 404.
//   - Token: with HandlerOptions.Token, every request, GET / included,
//     needs "Authorization: Bearer <token>" or is 401, before any Cluster
//     method runs. The comparison takes the same time for every wrong token.
//   - Standby: a Cluster that does not lead returns ErrNotLeader from every
//     method but Leader, having changed nothing. The handler then sends the
//     request, body and token included, to Leader's URL and answers what
//     the leader answers; GET /overview keeps the leader's figures with
//     "is-leader": false, the answering JobManager's. With no leader, an
//     unreachable one, or a request that a standby forwarded already (the
//     header X-Weir-Forwarded: never twice), the answer is 503.
//   - Client: a Client is a Cluster over HTTP: an answer other than 2xx is
//     an *Error carrying the server's messages, which unwraps to
//     ErrNotFound, ErrConflict or ErrInvalid for 404, 409 and 400; a
//     request no server answered is ErrUnreachable. Its requests last as
//     long as their contexts allow (dials time out after 10 s); Leader
//     returns the base URL. WaitSavepoint polls until COMPLETED.
package rest
