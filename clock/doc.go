// Package clock is weir's processing time: the one Clock interface that
// jobs, tasks, sources, sinks and watermark generators read the current
// time from and wait on.
//
// System is the wall clock (time.Now and time.Timer). Manual moves only
// when a test calls Advance or Set, firing the timers that came due before
// the call returns, so processing-time behaviour is deterministic in tests;
// AwaitWaiting tells a test that a task has set its timer. Sleep waits on
// any Clock and stops early when its context ends.
//
// Event time is not here: it is the records' own int64 milliseconds, with
// the bounds watermark.Min and watermark.Max (package stream/watermark).
//
// The package is a leaf: it imports the standard library only.
package clock
