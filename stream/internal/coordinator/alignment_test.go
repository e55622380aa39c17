package coordinator

import (
	"math"
	"sync"
	"testing"
	"time"

	"github.com/weirdata/weir/clock"
	"github.com/weirdata/weir/stream/internal/protocol"
)

// mailbox records what a subtask was sent.
type mailbox struct {
	mu   sync.Mutex
	sent []protocol.Message
}

func (m *mailbox) Deliver(x protocol.Message) {
	m.mu.Lock()
	m.sent = append(m.sent, x)
	m.mu.Unlock()
}

func (m *mailbox) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.sent)
}

// alignedSource is a source's alignment with a mailbox per subtask.
type alignedSource struct {
	*SourceAlignment
	boxes []*mailbox
}

func newAlignedSource(a *Alignment, id, group string, drift time.Duration, subtasks int) *alignedSource {
	s := &alignedSource{SourceAlignment: a.Source(id, group, drift, time.Duration(math.MaxInt64))}
	for i := range subtasks {
		s.boxes = append(s.boxes, &mailbox{})
		s.Register(i, s.boxes[i])
	}
	return s
}

// report is Flink's reportWatermarkEvent: a report, then an announcement.
func (s *alignedSource) report(subtask int, wm int64) {
	s.Report(protocol.ReportedWatermark{Task: protocol.TaskID{Vertex: s.id, Subtask: subtask}, Watermark: wm})
	s.Announce()
}

// latest is Flink's assertLatestWatermarkAlignmentEvent.
func (s *alignedSource) latest(t *testing.T, subtask int, want int64) {
	t.Helper()
	b := s.boxes[subtask]
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.sent) == 0 {
		t.Fatalf("%s subtask %d: no announcement, want %d", s.id, subtask, want)
	}
	if got := b.sent[len(b.sent)-1]; got != (protocol.WatermarkAlignment{MaxAllowed: want}) {
		t.Fatalf("%s subtask %d: last announcement %v, want %d", s.id, subtask, got, want)
	}
}

func newTestAlignment() *Alignment { return NewAlignment(clock.NewManual(time.UnixMilli(0))) }

// TestWatermarkAlignment follows Flink's
// SourceCoordinatorAlignmentTest.testWatermarkAlignment: the bound is the
// least reported watermark plus the drift, announced to every subtask that
// reported.
func TestWatermarkAlignment(t *testing.T) {
	s := newAlignedSource(newTestAlignment(), "source1", "group1", time.Second, 2)
	s.report(0, 42)
	s.latest(t, 0, 1042)
	if n := s.boxes[1].count(); n != 0 {
		t.Fatalf("subtask 1 got %d announcements before it reported", n)
	}
	s.report(1, 44)
	s.latest(t, 0, 1042)
	s.latest(t, 1, 1042)
	s.report(0, 5000)
	s.latest(t, 0, 1044)
	s.latest(t, 1, 1044)
}

// TestWatermarkAlignmentWithIdleness follows Flink's
// testWatermarkAlignmentWithIdleness: an idle subtask reports the maximal
// watermark and holds nobody back; with every subtask idle the bound is
// the maximal watermark (the sum overflows); active again, it counts again.
func TestWatermarkAlignmentWithIdleness(t *testing.T) {
	s := newAlignedSource(newTestAlignment(), "source1", "group1", time.Second, 2)
	s.report(0, 42)
	s.latest(t, 0, 1042)
	s.report(1, 44)
	s.latest(t, 0, 1042)
	s.latest(t, 1, 1042)
	s.report(0, math.MaxInt64) // subtask 0 becomes idle
	s.latest(t, 0, 1044)
	s.latest(t, 1, 1044)
	s.report(0, 42) // active again
	s.latest(t, 0, 1042)
	s.latest(t, 1, 1042)
	s.report(0, math.MaxInt64) // every subtask idle
	s.report(1, math.MaxInt64)
	s.latest(t, 0, math.MaxInt64)
	s.latest(t, 1, math.MaxInt64)
	s.report(0, 42)
	s.latest(t, 0, 1042)
	s.latest(t, 1, 1042)
	s.report(1, 46)
	s.latest(t, 0, 1042)
	s.latest(t, 1, 1042)
}

// TestWatermarkAlignmentWithTwoGroups follows Flink's
// testWatermarkAlignmentWithTwoGroups: groups do not see each other.
func TestWatermarkAlignmentWithTwoGroups(t *testing.T) {
	a := newTestAlignment()
	s1 := newAlignedSource(a, "source1", "group1", time.Second, 2)
	s2 := newAlignedSource(a, "source2", "group2", time.Second, 2)
	s1.report(0, 42)
	s1.latest(t, 0, 1042)
	s2.report(1, 44)
	s1.latest(t, 0, 1042)
	s2.latest(t, 1, 1044)
	s1.report(0, 5000)
	s1.latest(t, 0, 6000)
	s2.latest(t, 1, 1044)
}

// TestWatermarkAlignmentTwoSourcesOneGroup: sources of different
// operators in one group share the least watermark (Flink's
// CoordinatorStore keeps one WatermarkAggregator per group, over each
// source's combined watermark); a source all of whose subtasks are idle
// holds the group back no more.
func TestWatermarkAlignmentTwoSourcesOneGroup(t *testing.T) {
	a := newTestAlignment()
	fast := newAlignedSource(a, "fast", "g", 100*time.Millisecond, 2)
	slow := newAlignedSource(a, "slow", "g", 100*time.Millisecond, 1)
	fast.report(0, 500)
	fast.report(1, 700)
	fast.latest(t, 0, 600)
	fast.latest(t, 1, 600)
	slow.report(0, 200)
	slow.latest(t, 0, 300)
	fast.Announce()
	fast.latest(t, 0, 300)
	fast.latest(t, 1, 300)
	slow.report(0, math.MaxInt64)
	fast.Announce()
	fast.latest(t, 1, 600)
	slow.latest(t, 0, 600)
	if got := slow.MaxAllowed(); got != 600 {
		t.Fatalf("MaxAllowed %d, want 600", got)
	}
}

// TestWatermarkAggregator follows Flink's testWatermarkAggregator through a
// source of three subtasks and no drift: the bound is the least reported
// watermark, an idle subtask's maximal watermark aside.
func TestWatermarkAggregator(t *testing.T) {
	s := newAlignedSource(newTestAlignment(), "source", "g", 0, 3)
	for _, c := range []struct {
		subtask   int
		wm, least int64
	}{
		{0, 10, 10}, {1, 12, 10}, {2, 13, 10}, {1, 9, 9}, {1, math.MaxInt64, 10},
		{1, 8, 8}, {1, 20, 10}, {0, 23, 13}, {2, 22, 20},
	} {
		s.report(c.subtask, c.wm)
		if got := s.MaxAllowed(); got != c.least {
			t.Fatalf("after subtask %d reported %d: least %d, want %d", c.subtask, c.wm, got, c.least)
		}
	}
}

// TestAnnouncementEveryInterval: a report announces when the update
// interval passed since the source's last announcement (the first report
// at once), so that subtasks reporting every interval hear the bound every
// interval; the group's least is recomputed on every report all the same.
func TestAnnouncementEveryInterval(t *testing.T) {
	c := clock.NewManual(time.UnixMilli(0))
	a := NewAlignment(c)
	s := &alignedSource{SourceAlignment: a.Source("src", "g", 10*time.Millisecond, time.Second)}
	for i := range 2 {
		s.boxes = append(s.boxes, &mailbox{})
		s.Register(i, s.boxes[i])
	}
	rep := func(subtask int, wm int64) {
		s.Report(protocol.ReportedWatermark{Task: protocol.TaskID{Subtask: subtask}, Watermark: wm})
	}
	rep(0, 100)
	s.latest(t, 0, 110)
	rep(1, 50)
	if n := s.boxes[1].count(); n != 0 {
		t.Fatalf("an announcement within the interval: %d", n)
	}
	if got := s.MaxAllowed(); got != 60 {
		t.Fatalf("the bound was not recomputed on the report: %d", got)
	}
	c.Advance(999 * time.Millisecond)
	rep(0, 120)
	if n := s.boxes[0].count(); n != 1 {
		t.Fatalf("%d announcements before the interval passed", n)
	}
	c.Advance(time.Millisecond)
	rep(0, 130)
	s.latest(t, 0, 60)
	s.latest(t, 1, 60)
	// a subtask that reported but has no mailbox is skipped
	rep(2, 70)
	c.Advance(time.Second)
	rep(1, 80)
	s.latest(t, 1, 80)
}
