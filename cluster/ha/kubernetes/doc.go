// Package kubernetes keeps a weir cluster's high-availability data in the
// Kubernetes API: the ha.Store of JobManagers and TaskManagers started
// with --ha kubernetes, through controller-runtime's client.
//
// # Model
//
// Two objects per cluster id, in one namespace:
//
//	Lease      weir-<cluster>-leader  the leader: holder identity, renew
//	                                  time, its address in the annotation
//	                                  weir.io/address
//	ConfigMap  weir-<cluster>-ha      data: "epoch", "job.<id>" (JSON),
//	                                  "checkpoint.<id>.<incarnation>" (JSON)
//
// Election is client-go's Lease lock algorithm: a candidate takes the
// Lease when it is free or when its record has not changed for a lease
// duration of this candidate's own clock (no clock of another machine is
// trusted), and renews it. The epoch is the Lease's leaseTransitions,
// raised by every change of holder through the Lease's resourceVersion,
// so two leaderships never share one.
//
// # Contracts
//
//   - Fencing: client-go's Lease lock does not fence by itself. On taking
//     the Lease a leader raises the ConfigMap's "epoch" to its own by a
//     compare-and-swap on resourceVersion; every write reads the
//     ConfigMap, refuses with ha.ErrFenced unless "epoch" is the writer's,
//     and updates it by compare-and-swap. Once a new leader raised the
//     epoch, no write of an older leadership can land.
//   - The ConfigMap holds pointers only (job specs and checkpoint paths),
//     well under the API server's 1 MiB object limit.
//   - Leadership.Lost closes when the Lease shows another holder, or when
//     renewals failed for two thirds of the lease duration.
package kubernetes
