// Package window is Flink's windowing model for weir's DataStream API:
// windows, the assigners that put elements into them, the triggers that
// decide when a window is evaluated and the evictors that drop elements
// from it. The stream package's window operator (stream.Window and its
// functions) drives them; this package knows nothing of the runtime and
// imports only the standard library and memory.
//
// # Windows
//
// A Window is comparable, because it is the namespace of the keyed state
// and timers that hold it, and has a MaxTimestamp: the timestamp of every
// result the window emits. TimeWindow is [Start, End): End is exclusive
// and MaxTimestamp is End - 1. GlobalWindow is the one window of
// GlobalWindows and ends at the end of time (math.MaxInt64).
//
// # Assigners
//
// An Assigner maps an element (a pointer to it, so that dynamic assigners
// can read it without boxing) and its timestamp to windows: tumbling
// windows start at GetWindowStartWithOffset(ts, offset, size), sliding
// windows are every window of size whose start is in (ts - size,
// lastStart], sessions are [ts, ts + gap) (the gap static or per element),
// all in event time or, ignoring the timestamp, in the operator's
// processing time. An event-time assigner refuses an element without a
// timestamp, and one whose window would start below math.MinInt64 or end
// above math.MaxInt64 (ErrOutOfRange, naming the timestamp): no window it
// returns ends at or before its start. A MergingAssigner (sessions) merges the windows of one key
// that intersect (a.Start <= b.End and a.End >= b.Start: touching windows
// merge); MergingWindowSet is Flink's: each in-flight window maps to the
// state window that holds its contents, so a merge moves the mapping and
// merges the merged windows' state into one state window.
//
// # Constructors
//
// Assigner and trigger constructors return one value, so that a program
// writes them inline, as Flink's
// window(TumblingEventTimeWindows.of(size)). Invalid parameters (a size
// that is not positive, an offset not below the size, a count below one,
// a nil function) leave the value carrying the error: Err returns it,
// stream.Window and WindowedStream.Trigger report it as a build error
// naming the caller's line, and the value returns it from its first call.
//
// # Triggers
//
// A Trigger answers Continue, Fire, Purge or FireAndPurge for each element
// added to a window and for each of the window's timers. It keeps nothing
// in its own fields: its state lives per key and window in the operator's
// keyed state (Value and Reducing over TriggerContext.RawState, encoded
// with memory.Codec, or over Int64State for int64 values, which counts and
// times are, without encoding), so snapshots carry it, and its timers are the
// operator's, namespaced by the window. OnMerge merges that state
// (Reducing.Merge) and registers timers for the merged window; Clear drops
// both when the window is cleaned up. The defaults are EventTimeTrigger
// (fire when the watermark reaches MaxTimestamp, at once when it already
// has), ProcessingTimeTrigger, and NeverTrigger for global windows
// (EndOfStreamTrigger, firing when a bounded input ends, with
// GlobalWindowsWithEndOfStreamTrigger).
// CountTrigger, PurgingTrigger, ContinuousEventTimeTrigger,
// ContinuousProcessingTimeTrigger and DeltaTrigger are Flink's.
//
// # Evictors
//
// An Evictor sees a window's elements with their timestamps before and
// after the window function runs and evicts some (CountEvictor keeps the
// last n, TimeEvictor those within a size of the newest timestamp,
// DeltaEvictor those whose delta to the last element is below a
// threshold). A window with an evictor keeps its elements in list state,
// never an accumulator.
//
// # Contracts the operator keeps
//
// The stream operator sets the current key before calling an assigner,
// trigger or evictor, binds the TriggerContext to the window, and follows
// Flink's WindowOperator: a fired window's function output carries the
// window's MaxTimestamp; an event-time window whose MaxTimestamp plus the
// allowed lateness is at or below the watermark takes no element; its
// state is dropped by a cleanup timer at that time (never when it would
// overflow); processing-time windows are cleaned up at MaxTimestamp.
// When the input ends, the window operator fires the processing-time
// windows still open, each as at its own end, so that a bounded input (a
// file, a socket whose server closed) loses none; Flink drops them.
package window
