// Package op holds the operators of DataStream programs (Flink's
// api/operators and runtime/operators/windowing): map, filter and flat
// map, and their rich forms with Open, Close and errors; process functions on plain and keyed streams, with one and two
// inputs and broadcast state; rolling reductions; the window operator with
// its contents, triggers and evictors; window and interval joins; the
// async operator of OrderedWait and UnorderedWait (Flink's
// AsyncWaitOperator: calls completed on other goroutines reach it as its
// task's mail); sinks:
// SinkWriter runs any sink of stream/sink's contract (the file sink among
// them) with its two-phase commit; and the sorted inputs of keyed
// operators in BATCH mode.
//
// An operator is a task.Operator whose input is a core.Output (Push). The
// API (package stream) builds each one per subtask with the user's
// functions. Operators that call user functions with a context are
// generic over the API's context type C and collector type Col: the API
// hands them a context bound to the operator's per-record state (Ctx,
// KeyedCtx, ...), which the operator sets before each call, so a call
// costs what calling the user's function costs.
//
// Keyed operators keep their state in a state.Backend of their subtask's
// key groups (KeyedBase), on the heap (snapshotted asynchronously) or on
// disk (stream/state/disk, incrementally under checkpoints that keep
// shared files). They process a batch in runs of keyRun records whose
// keys are hashed and whose state entries are prefetched first.
package op
