// Package ha is the contract of a weir cluster's high availability: how
// JobManagers elect a leader, and what the leader keeps where a standby
// finds it. The backends are packages of their own: etcd (cluster/ha/etcd)
// and Kubernetes.
//
// # Model
//
// JobManagers of one cluster (a cluster id) campaign for leadership. The
// leader holds it while its lease lives; each leadership has an epoch, and
// a later leadership has a larger one. The leader writes the jobs it runs
// (Job: id, incarnation, name, the spec it rebuilds the job from) and, per
// job incarnation, the pointer to its latest completed checkpoint. A
// standby that takes over reads them and restarts each job from its
// pointer. TaskManagers find the leader (Leader, WatchLeader) and accept
// messages of the current epoch only.
//
// # Contracts
//
//   - Fencing: every write names the writer's epoch and fails with
//     ErrFenced unless that leadership still holds, in the same atomic
//     step as the write. A leader paused past its lease (a GC pause,
//     SIGSTOP, a partition) that wakes up cannot write anything.
//   - A job is written whole and its checkpoint pointer only grows: a
//     pointer to an older checkpoint than the stored one is refused.
//   - Entries are namespaced by cluster id, and checkpoint pointers by job
//     incarnation: a job submitted again under the same id starts with no
//     pointer, and RemoveJob removes a job with its pointers, so a stale
//     entry never restarts an old job.
//   - Lost is closed once a leadership can no longer be trusted: its lease
//     expired, was revoked, or could not be renewed within its TTL.
package ha
