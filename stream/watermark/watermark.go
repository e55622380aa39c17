package watermark

import (
	"math"
	"time"

	"github.com/weirdata/weir/clock"
)

// Watermarks at the ends of event time.
const (
	// Min is the watermark before any watermark: math.MinInt64, Flink's
	// Long.MIN_VALUE. It is also a timestamp meaning "no timestamp".
	Min int64 = math.MinInt64
	// Max is the end of event time: a bounded input emits it when it ends, so
	// every event-time timer fires.
	Max int64 = math.MaxInt64
)

// DefaultAutoInterval is how often generators are asked for their watermark
// (OnPeriodicEmit) unless a job says otherwise: Flink's
// pipeline.auto-watermark-interval.
const DefaultAutoInterval = 200 * time.Millisecond

// Output receives a generator's watermarks and idleness.
type Output interface {
	// EmitWatermark emits watermark wm; it also marks the output active.
	EmitWatermark(wm int64)
	// MarkIdle marks the output idle: downstream does not wait for its
	// watermarks until it emits one or is marked active.
	MarkIdle()
	// MarkActive marks the output active again.
	MarkActive()
}

// Generator generates watermarks from the events of one split (or one
// source subtask). OnEvent is called for every event, with its timestamp,
// and OnPeriodicEmit every auto-watermark interval; either may report to
// out. Not safe for concurrent use.
type Generator[T any] interface {
	OnEvent(event T, timestamp int64, out Output)
	OnPeriodicEmit(out Output)
}

// BeforeEventGenerator is a Generator that also sees every event before the
// source emits it: a watermark OnBeforeEvent emits goes ahead of the event,
// and one OnEvent emits follows it. A generator that holds back a watermark
// it computed (to send fewer) decides there whether the next event needs it
// first. The source stamps and emits the events of such a generator one at a
// time (Split.Collect), unless it is a BeforeTimestampsGenerator.
type BeforeEventGenerator[T any] interface {
	Generator[T]
	OnBeforeEvent(event T, timestamp int64, out Output)
}

// BeforeTimestampsGenerator is a BeforeEventGenerator that reads only the
// timestamps, and takes them a batch at a time: OnBeforeTimestamps is
// OnBeforeEvent for the event of ts[0], and returns how many of the events
// of ts (at least 1) need nothing before them; the source emits those,
// passes their timestamps to OnTimestamps and asks again for the rest.
type BeforeTimestampsGenerator interface {
	TimestampGenerator
	OnBeforeTimestamps(ts []int64, out Output) int
}

// TimestampGenerator is a Generator whose OnEvent reads only the timestamp
// and emits nothing at once (the periodic generators: bounded
// out-of-orderness, ascending timestamps): OnTimestamps is OnEvent for a
// batch of events, in order. A source with such a generator assigns and
// observes the timestamps of a batch of records at once.
type TimestampGenerator interface {
	OnTimestamps(ts []int64)
}

// Context is what a Strategy gives the generators it creates.
type Context struct {
	// Clock measures idleness; nil means clock.System.
	Clock clock.Clock
}

func (c Context) clock() clock.Clock {
	if c.Clock == nil {
		return clock.System{}
	}
	return c.Clock
}
