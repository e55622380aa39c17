package metrics

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/weirdata/weir/clock"
)

// DefaultSpan is the span a Meter's rate is measured over when it is
// given none: Flink's MeterView default of 60 seconds.
const DefaultSpan = 60 * time.Second

// UpdateInterval is the least time between two samples a Meter keeps:
// Flink's View.UPDATE_INTERVAL_SECONDS.
const UpdateInterval = 5 * time.Second

// Meter is Flink's MeterView: it counts events and measures their rate
// per second over a span of time. MarkEvent adds to the updating
// goroutine's count (the subtask's) and reads no clock; Group.Publish
// publishes the count. Rate reads the clock and keeps a sample of the
// published count (at most one every UpdateInterval): the rate is the
// events since the newest sample at least span old (else the oldest, the
// meter's start) divided by the seconds since it. So a meter read at
// least every UpdateInterval measures over span, as Flink's; one read
// less often measures over the time since the sample before the span.
type Meter struct {
	n, last int64 // the updater's count, and the one published last
	pub     atomic.Int64
	clock   clock.Clock
	span    time.Duration

	mu      sync.Mutex
	samples []meterSample // oldest first; the first at least span old when any is
}

type meterSample struct {
	at time.Time
	n  int64
}

// NewMeter returns a meter reading c (nil: clock.System) over span (<= 0:
// DefaultSpan), started now.
func NewMeter(c clock.Clock, span time.Duration) *Meter {
	if c == nil {
		c = clock.System{}
	}
	if span <= 0 {
		span = DefaultSpan
	}
	return &Meter{clock: c, span: span, samples: []meterSample{{at: c.Now()}}}
}

// MarkEvent counts one event.
func (m *Meter) MarkEvent() { m.n++ }

// MarkEventN counts n events.
func (m *Meter) MarkEventN(n int64) { m.n += n }

// Count returns the events counted, on the updating goroutine.
func (m *Meter) Count() int64 { return m.n }

// Span returns the span the rate is measured over.
func (m *Meter) Span() time.Duration { return m.span }

func (m *Meter) publish() {
	if m.n != m.last {
		m.last = m.n
		m.pub.Store(m.n)
	}
}

// Rate returns the events per second over the span (see Meter) as of the
// last publish, on any goroutine: zero when no time passed since the
// meter started.
func (m *Meter) Rate() float64 {
	_, r := m.published()
	return r
}

// published returns the count and the rate as of the last publish.
func (m *Meter) published() (int64, float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now, n := m.clock.Now(), m.pub.Load()
	if last := m.samples[len(m.samples)-1]; now.Sub(last.at) >= UpdateInterval {
		m.samples = append(m.samples, meterSample{at: now, n: n})
	}
	drop := 0
	for drop < len(m.samples)-1 && now.Sub(m.samples[drop+1].at) >= m.span {
		drop++
	}
	if drop > 0 {
		m.samples = m.samples[:copy(m.samples, m.samples[drop:])]
	}
	base := m.samples[0]
	dt := now.Sub(base.at)
	if dt <= 0 {
		return n, 0
	}
	return n, float64(n-base.n) / dt.Seconds()
}
