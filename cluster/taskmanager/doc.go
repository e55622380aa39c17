// Package taskmanager is a weir cluster's TaskManager: it registers with
// the JobManager (its address, or the leader the HA store names) with its
// slots and build fingerprint, sends a heartbeat every second, and runs
// the attempts deployed to it in process through the cluster.Program,
// each with its cluster.Env (checkpoint directory, restore path, slots and
// the gate that records checkpoints with the JobManager). Every heartbeat
// interval it sends the Report of each running attempt (cluster.Control),
// and the last one with the attempt's end.
//
// With Options.DataAddress it serves a shuffle (cluster/shuffle) there and
// registers the address: it then takes shares of spread attempts, whose
// cluster.Env.Spread holds its part, every share's slots and data address,
// and its shuffle's Client and Server for the program's channels.
//
// # Contracts
//
//   - A message of an epoch older than the largest seen is refused.
//   - When its stream breaks or the JobManager is silent for the timeout,
//     it connects again; its attempts are canceled once the JobManager was
//     not heard from for the timeout (before the silent connection closes),
//     and at every new registration (the JobManager took them for lost).
//   - A refusal for another build ends Run with an error wrapping
//     cluster.ErrFingerprint.
package taskmanager
