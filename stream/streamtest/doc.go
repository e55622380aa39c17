// Package streamtest tests DataStream operators one record at a time,
// outside a job, as Flink's OneInputStreamOperatorTestHarness and
// KeyedOneInputStreamOperatorTestHarness: push records with timestamps,
// watermarks and processing-time advances (a manual clock) into a chain of
// operators, read back its records with their timestamps and its
// watermarks in the order they were emitted, and each side output; take a
// snapshot that a new harness restores, at another parallelism too.
// New2 does the same for a two-input operator (Flink's
// TwoInputStreamOperatorTestHarness), with ProcessElement1 and
// ProcessElement2.
//
//	h, err := streamtest.Keyed(streamtest.Options{}, keyFn, newFn)
//	h.ProcessElement(v, 42)   // a record with timestamp 42
//	h.ProcessWatermark(5)     // due event-time timers fire, then the watermark is emitted
//	h.SetProcessingTime(100)  // due processing-time timers fire
//	h.Output()                // records and watermarks in emitted order
//	snap, _ := h.Snapshot()   // keyed state and timers; h2.Restore(snap)
package streamtest
