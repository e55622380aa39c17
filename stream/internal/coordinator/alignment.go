package coordinator

import (
	"math"
	"slices"
	"sync"
	"time"

	"github.com/weirdata/weir/clock"
	"github.com/weirdata/weir/stream/internal/protocol"
)

// Alignment is the watermark alignment of a job attempt's sources (the
// alignment part of Flink's SourceCoordinator, FLIP-182, with the
// WatermarkAggregator its CoordinatorStore keeps per group). A source that
// aligns has a SourceAlignment: its subtasks report their watermarks to
// it, it keeps the least of them (the source's combined watermark), and
// the group, which may hold sources of several operators, keeps the least
// of its sources'. Each source announces to the subtasks that reported
// the group's least plus its maximal drift: the watermark their splits
// may reach. Nothing runs on its own goroutine: a report that finds the
// source's update interval passed since its last announcement announces,
// and every subtask reports every interval. Safe for concurrent use.
type Alignment struct {
	mu     sync.Mutex
	clock  clock.Clock
	groups map[string]map[string]int64 // per group, each source's combined watermark
}

// NewAlignment returns the watermark alignment of an attempt whose
// intervals run on clk (nil: clock.System).
func NewAlignment(clk clock.Clock) *Alignment {
	if clk == nil {
		clk = clock.System{}
	}
	return &Alignment{clock: clk, groups: map[string]map[string]int64{}}
}

// SourceAlignment is one source's side of watermark alignment: the
// watermarks its subtasks reported and where its announcements go.
type SourceAlignment struct {
	a        *Alignment
	id       string
	group    string
	drift    int64 // ms
	interval time.Duration
	reported map[int]int64         // by subtask
	readers  map[int]protocol.Task // by subtask
	last     time.Time             // the last announcement
	any      bool                  // announced at least once
}

// Source returns the alignment of the source of stable id in group, with
// the group's maximal drift (whole milliseconds) and its update interval.
func (a *Alignment) Source(id, group string, maxDrift, interval time.Duration) *SourceAlignment {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.groups[group] == nil {
		a.groups[group] = map[string]int64{}
	}
	return &SourceAlignment{a: a, id: id, group: group, drift: maxDrift.Milliseconds(), interval: interval,
		reported: map[int]int64{}, readers: map[int]protocol.Task{}}
}

// Interval returns how often the source's subtasks report.
func (s *SourceAlignment) Interval() time.Duration { return s.interval }

// Register makes subtask's mailbox known: announcements go to t once the
// subtask reported.
func (s *SourceAlignment) Register(subtask int, t protocol.Task) {
	s.a.mu.Lock()
	defer s.a.mu.Unlock()
	s.readers[subtask] = t
}

// Report records a subtask's watermark (Flink's handleReportedWatermark):
// the source's combined watermark and the group's least are recomputed at
// once, and when the update interval passed since the source's last
// announcement it announces.
func (s *SourceAlignment) Report(r protocol.ReportedWatermark) {
	s.a.mu.Lock()
	defer s.a.mu.Unlock()
	s.reported[r.Task.Subtask] = r.Watermark
	combined := int64(math.MaxInt64)
	for _, wm := range s.reported {
		combined = min(combined, wm)
	}
	s.a.groups[s.group][s.id] = combined
	if now := s.a.clock.Now(); !s.any || now.Sub(s.last) >= s.interval {
		s.announce(now)
	}
}

// Announce sends the subtasks that reported the bound now (Flink's
// announceCombinedWatermark).
func (s *SourceAlignment) Announce() {
	s.a.mu.Lock()
	defer s.a.mu.Unlock()
	s.announce(s.a.clock.Now())
}

func (s *SourceAlignment) announce(now time.Time) {
	s.last, s.any = now, true
	m := protocol.WatermarkAlignment{MaxAllowed: s.maxAllowed()}
	subtasks := make([]int, 0, len(s.reported))
	for i := range s.reported {
		subtasks = append(subtasks, i)
	}
	slices.Sort(subtasks)
	for _, i := range subtasks {
		if t := s.readers[i]; t != nil {
			t.Deliver(m)
		}
	}
}

// MaxAllowed returns the group's least watermark plus the maximal drift,
// the maximal watermark when that overflows (every source of the group
// idle or ended); the group's least is math.MinInt64 before any report.
func (s *SourceAlignment) MaxAllowed() int64 {
	s.a.mu.Lock()
	defer s.a.mu.Unlock()
	return s.maxAllowed()
}

func (s *SourceAlignment) maxAllowed() int64 {
	least := int64(math.MaxInt64)
	for _, wm := range s.a.groups[s.group] {
		least = min(least, wm)
	}
	if len(s.a.groups[s.group]) == 0 {
		least = math.MinInt64
	}
	if least > math.MaxInt64-s.drift {
		return math.MaxInt64
	}
	return least + s.drift
}
