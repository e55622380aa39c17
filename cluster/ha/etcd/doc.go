// Package etcd keeps a weir cluster's high-availability data in etcd
// (go.etcd.io/etcd/client/v3): the ha.Store of JobManagers and
// TaskManagers started with --ha etcd.
//
// # Model
//
// A store is a client of the etcd endpoints and a cluster id. Its keys:
//
//	/weir/<cluster>/leader/<lease>                  a candidate, valued its address
//	/weir/<cluster>/jobs/<job id>                   the job, as JSON
//	/weir/<cluster>/checkpoints/<job id>/<incarnation>  its pointer, as JSON
//
// Leadership is etcd's election (concurrency.Election): each candidate
// puts its key under leader/ with its session's lease, and the candidate
// whose key has the least create revision leads. That revision is the
// leadership's epoch: etcd's revisions only grow, so a later leader's is
// larger.
//
// # Contracts
//
//   - A write is one transaction whose guard is the writer's leader key
//     still having the epoch as its create revision. The key goes with
//     the lease: once a paused leader's lease expired, its writes fail
//     with ha.ErrFenced, even if it never noticed.
//   - The checkpoint pointer is set by compare-and-swap on the job's key
//     and the pointer's key, so that it only grows and only for the
//     incarnation stored.
//   - Leadership.Lost is closed when the session's lease can no longer be
//     kept alive: etcd unreachable past the TTL, or the lease revoked.
package etcd
