// Package shuffle is weir's data plane between processes: the logical
// channels of pipelined edges whose producer and consumer subtasks run in
// different TaskManagers, carried over gRPC bidirectional streams with
// Flink's credit-based flow control per channel.
//
// # Model
//
// A channel is one producer subtask's partition for one consumer subtask of
// one edge in one attempt of a job (ChannelID). Its producer end is a
// Producer, opened by the producer process's Client; its consumer end is a
// channel of an Inbox, registered by the consumer process's Server for one
// consumer subtask of one edge (InboxID) with a channel per producer
// subtask, as flow's in-process inbox.
//
//	producer process                               consumer process
//	Producer ─┐                                  ┌─> Inbox (job, attempt, edge, consumer c)
//	Producer ─┼─ Client ══ one Exchange stream ══ Server ─┤    channel p: queue of capacity frames
//	Producer ─┘   frames ──>     <── credits       └─> Inbox ...
//
// All the channels from one process to another share one gRPC stream (the
// Exchange method of the hand-written service weir.shuffle.Shuffle), as
// Flink shares one TCP connection per pair of TaskManagers: a channel's
// flow control is its credit, not the stream's, so a channel out of credit
// holds back no other, and the stream count stays one per process pair
// however many channels an edge has.
//
// Messages are raw bytes: a codec registered under the content-subtype
// "weir-shuffle" (an encoding.CodecV2 over pooled mem.BufferSlices) hands a
// frame's pooled buffer to gRPC without a protobuf copy, and copies each
// received message once into a pooled buffer that the Frame holds until
// Release.
//
// # Frames
//
// Producer to consumer: hello (the producer process's Options.Name), open
// (a channel's index on the stream and its ChannelID), data (an encoded
// batch, opaque), event (a kind byte and opaque bytes: watermark, status,
// barrier; EndOfPartition, the one kind the transport knows, is sent by
// Producer.Close), priority (a kind byte and opaque bytes: an unaligned
// barrier) and heartbeat. Consumer to producer: credit grants (pairs of
// channel index and count), releases (channels whose consumer ended) and
// heartbeat.
//
// # Contracts
//
//   - Order: the frames of a channel reach its Inbox in the order they were
//     sent, except priority frames, which go before the frames queued in the
//     channel when they arrive (Frame.Overtook counts those), in the order
//     they were sent. EndOfPartition comes after every frame sent before
//     Close.
//   - Credit: an Inbox grants each channel its capacity when the producer
//     opens it (Flink's exclusive buffers) and one credit each time Poll takes
//     a data or event frame from it. A Producer sends data and events only
//     against credit: Send waits without it, and that stops only its own
//     channel. Priority frames take no credit. A producer that sends beyond
//     its credit breaks its connection with an error. A channel holds at most
//     capacity data and event frames.
//   - Blocking: Inbox.Block stops reading a channel (barrier alignment): its
//     queue fills, its producer runs out of credit and stops, and nothing
//     else does. Unblock reads it again.
//   - Notification: Inbox.Poll never waits; Ready receives when a channel
//     that is not blocked gets a frame, a priority frame arrives, or a
//     connection breaks.
//   - Failure: a connection that breaks (the peer process died, the stream
//     was reset, or the peer sent nothing for Options.HeartbeatTimeout) fails
//     both sides with an error wrapping ErrBroken that names the peer: every
//     Producer on it returns it, and every Inbox with a channel on it that
//     had not ended returns it from Poll. Heartbeats go both ways every
//     Options.HeartbeatInterval; gRPC's own keepalive pings cannot be more
//     frequent than every 10 seconds, too slow for the failure signal.
//   - End: Inbox.Close releases its queued frames and tells its producers to
//     drop what they send. Client.Close half-closes each stream and waits for
//     the consumer to read it to the end before tearing it down.
//   - Memory: every message buffer, sent or received, comes from one tiered
//     pool and goes back to it (gRPC frees a sent one once written, Release a
//     received one). Per frame the package allocates only the one-element
//     mem.BufferSlice its codec hands gRPC; the rest is gRPC's.
//   - Blocking exchanges: not served here. The package carries pipelined
//     channels, pushed by the producer; a blocking result read from the
//     producer's disk needs a request from the consumer first.
//
// The runtime wires the package in: a TaskManager registers a Server on its
// grpc.Server (made with ServerOptions), and for each remote channel of a
// pipelined edge the consumer task registers an Inbox and the producer task
// opens a Producer.
package shuffle
