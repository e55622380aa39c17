// Package dataplane carries a flow job's channels between processes over
// cluster/shuffle: it is the flow.Transport of a TaskManager.
//
// # Model
//
// Every process of a job builds the same flow.Graph and starts it with the
// same flow.Remote placement; each runs its own subtasks. A channel whose
// producer and consumer subtasks run in different processes is a shuffle
// channel: the producer's process opens it with its Client at the address
// of the consumer's process, and the consumer's process registers its end
// on its Server. Channels are named by the job, the attempt, the edge and
// the two subtasks, so two attempts of a job never mix.
//
// # Contracts
//
//   - Frames: a batch is one data frame (the edge's codec's bytes of its
//     records, one after the other); an event is an event frame of flow's
//     kind with Value and Meta; EndOfPartition is shuffle's end of
//     partition. shuffle's credit, order and failure contracts hold.
//   - Failure: a broken connection fails the job in the process that sees
//     it, naming the peer (shuffle.ErrBroken). A job that fails in one
//     process does not end the others by itself: whoever runs the
//     processes (the JobManager) cancels the other attempts.
package dataplane
