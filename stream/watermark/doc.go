// Package watermark holds Flink's watermark strategies and generators: how a
// source turns the timestamps of its events into watermarks, per split, and
// combines the splits' watermarks into its own. It imports only the standard
// library; the stream runtime drives it.
//
// # Model
//
// Timestamps and watermarks are int64 milliseconds, as in Flink. A watermark
// w says that no event with timestamp <= w is expected any more. Min
// (math.MinInt64) is the watermark before any, Max (math.MaxInt64) the end of
// event time, which a bounded input emits when it ends.
//
// A Generator sees every event with its timestamp (OnEvent) and is asked
// periodically, every auto-watermark interval (DefaultAutoInterval, 200 ms),
// for its watermark (OnPeriodicEmit). It reports to an Output: EmitWatermark,
// MarkIdle (downstream stops waiting for this output's watermarks) and
// MarkActive. Emitting a watermark also marks the output active. Generators
// may emit from either call: periodic generators emit in OnPeriodicEmit,
// punctuated ones in OnEvent. A BeforeEventGenerator also sees each event
// before the source emits it (OnBeforeEvent), so that a watermark it held
// back can go ahead of the event that needs it.
//
// The built-in generators match Flink 1.20:
//
//   - ForBoundedOutOfOrderness(d): watermark = largest timestamp seen - d - 1
//     (Min before any event), emitted periodically; d is used in whole
//     milliseconds, truncated.
//   - ForMonotonousTimestamps(): bounded out-of-orderness 0, so largest - 1.
//   - NoWatermarks(): never emits.
//   - WithIdleness(timeout): wraps a generator; a periodic emission that saw
//     no event since the previous one starts a countdown, and the first
//     periodic emission more than timeout after it marks the output idle
//     (once) instead of asking the wrapped generator. The next event makes
//     the output active again (the wrapped generator's next watermark says
//     so). Time is read from a clock.Clock (Context.Clock), so tests inject one.
//
// A Strategy bundles a generator factory with a timestamp Assigner; its
// builders (WithTimestampAssigner, WithTimestampAssignerErr, WithIdleness,
// WithWatermarkAlignment) return new strategies. An invalid strategy (a
// negative bound, a timeout not above zero) reports its error from Err and
// NewGenerator.
//
// # Watermark alignment
//
// WithWatermarkAlignment(group, maxDrift, updateInterval) is Flink's
// FLIP-182 and FLIP-217: the strategy only carries the Alignment, and the
// stream runtime applies it. Every updateInterval each source subtask
// reports its watermark (the maximal watermark when it is idle or
// finished) to its source; the source announces to its subtasks the least
// watermark over the group's sources plus maxDrift; a split whose
// watermark passed the announced bound is paused until a bound reaches it
// again, and a subtask whose own watermark passed it reads nothing. Idle
// splits are neither paused nor resumed. Splits.SetPaused stops a paused
// split's idleness clock (Flink's PausableRelativeClock), so that a split
// waiting for the others does not go idle and release the watermark.
//
// # Splits and the Multiplexer
//
// A source subtask reads several splits; each split has its own generator,
// and the subtask's watermark is combined by a Multiplexer, as Flink's
// WatermarkOutputMultiplexer does: the combined watermark is the minimum
// over the registered outputs that are not idle, and it is emitted only when
// it increases; when every output is idle the combined output is marked
// idle (and the watermark does not move). An output registered but never
// reported to holds the watermark at Min. Each registered output has an
// immediate form (updates may emit at once: what a generator's OnEvent uses)
// and a deferred form (updates are combined at the next OnPeriodicEmit: what
// OnPeriodicEmit uses, so a round of periodic emissions combines once).
// Unregistering an output (a finished split) does not move the watermark by
// itself; the next update does. Splits wires this up per split, as Flink's
// source operator does.
//
// # Concurrency
//
// Generators, Multiplexer and Splits are not safe for concurrent use: one
// task drives them, calling OnEvent and OnPeriodicEmit from its own loop.
package watermark
