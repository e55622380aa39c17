package task

import (
	"context"
	"errors"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weirdata/weir/clock"
	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/stream/internal/core"
	"github.com/weirdata/weir/stream/internal/protocol"
	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/watermark"
)

// The tests of this file port Flink's SourceOperatorAlignmentTest and
// SourceOperatorSplitWatermarkAlignmentTest: a source subtask driven one
// step at a time, its reader a mock whose records are their own
// timestamps, its coordinator a fake that records the reports, the
// announcements posted to its mailbox as the coordinator posts them.

// errNothing is the mock reader's "nothing available" (Flink's
// InputStatus.NOTHING_AVAILABLE): the tests step the source only when the
// reader has a record.
var errNothing = errors.New("nothing available")

// mockSplit is Flink's MockSourceSplit: records, and whether the split
// ends after them.
type mockSplit struct {
	id     string
	recs   []int
	next   int
	finite bool
}

// mockReader is Flink's MockSourceReader with per-split outputs: it hands
// out one record of the first split not paused that has one.
type mockReader struct {
	mu     sync.Mutex
	splits []*mockSplit
	paused map[string]bool
	noMore bool
	buf    [1]int
}

func (r *mockReader) add(s ...*mockSplit) {
	r.mu.Lock()
	r.splits = append(r.splits, s...)
	r.mu.Unlock()
}

// readable reports whether Next has a record or an end to hand out.
func (r *mockReader) readable() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.splits {
		if !r.paused[s.id] && (s.next < len(s.recs) || s.finite) {
			return true
		}
	}
	return r.noMore && len(r.splits) == 0
}

func (r *mockReader) pausedSplits() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ids []string
	for _, s := range r.splits {
		if r.paused[s.id] {
			ids = append(ids, s.id)
		}
	}
	return ids
}

func (r *mockReader) Next(context.Context) (source.Batch[int], error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, s := range r.splits {
		if r.paused[s.id] {
			continue
		}
		if s.next < len(s.recs) {
			r.buf[0] = s.recs[s.next]
			s.next++
			return source.Batch[int]{Split: s.id, First: int64(s.next - 1), Records: r.buf[:]}, nil
		}
		if s.finite {
			r.splits = append(r.splits[:i], r.splits[i+1:]...)
			return source.Batch[int]{Split: s.id, First: int64(s.next), End: true}, nil
		}
	}
	if r.noMore && len(r.splits) == 0 {
		return source.Batch[int]{}, io.EOF
	}
	return source.Batch[int]{}, errNothing
}

func (r *mockReader) AddSplits([]source.Split) {}

func (r *mockReader) Positions() []source.Split {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []source.Split
	for _, s := range r.splits {
		out = append(out, source.Split{ID: s.id, Offset: int64(s.next), Records: int64(s.next), Len: -1})
	}
	return out
}

func (r *mockReader) Close() error { return nil }

func (r *mockReader) PauseOrResumeSplits(pause, resume []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range pause {
		r.paused[id] = true
	}
	for _, id := range resume {
		delete(r.paused, id)
	}
}

type mockSource struct{ r *mockReader }

func (mockSource) Boundedness() source.Boundedness { return source.Unbounded }
func (mockSource) Enumerator(int, *source.EnumeratorState) (source.Enumerator, error) {
	return nil, errors.New("unused")
}
func (m mockSource) Reader(source.ReaderContext) (source.Reader[int], error) { return m.r, nil }

type noSplits struct{}

func (noSplits) Request(int) (source.Grant, error) { return source.Grant{Status: source.NoMore}, nil }
func (noSplits) AddSplitsBack([]source.Split)      {}
func (noSplits) Snapshot() source.EnumeratorState  { return source.EnumeratorState{} }

// fakeAligner records the reports of a source subtask.
type fakeAligner struct {
	every   time.Duration
	mb      protocol.Task
	reports []int64
}

func (a *fakeAligner) Interval() time.Duration         { return a.every }
func (a *fakeAligner) Register(_ int, t protocol.Task) { a.mb = t }
func (a *fakeAligner) Report(r protocol.ReportedWatermark) {
	a.reports = append(a.reports, r.Watermark)
}

// alignedSource is a source subtask under test, as Flink's
// SourceOperatorTestContext.
type alignedSource struct {
	t      *testing.T
	clk    *clock.Manual
	rt     *Runtime
	src    *Source[int]
	reader *mockReader
	coord  *fakeAligner
	out    []int
	events []flow.Event
}

func (a *alignedSource) Event(e flow.Event) error {
	a.events = append(a.events, e)
	return nil
}

// newAlignedSource opens a source of strategy (timestamps: the records)
// with alignment reported every millisecond; periodic watermarks every
// auto interval.
func newAlignedSource(t *testing.T, strategy watermark.Strategy[int], auto time.Duration) *alignedSource {
	t.Helper()
	a := &alignedSource{t: t, clk: clock.NewManual(time.UnixMilli(1)),
		reader: &mockReader{paused: map[string]bool{}}, coord: &fakeAligner{every: time.Millisecond}}
	strategy = strategy.WithTimestampAssigner(func(r int, _ int64) int64 { return int64(r) })
	a.rt = New(nil, Config{Clock: a.clk, AutoWatermarkInterval: auto, Vertex: "source", Name: "source"}, 0, 1, nil)
	out := core.PushFunc[int](func(b []core.Record[int]) error {
		for _, r := range b {
			a.out = append(a.out, r.Value)
		}
		return nil
	})
	a.src = NewSource[int](mockSource{a.reader}, strategy, noSplits{}, out, "source", 1)
	a.src.Align(a.coord)
	a.rt.AddOperator(a.src, "source", "source")
	a.rt.AddEventer(a)
	if err := a.rt.Open(); err != nil {
		t.Fatal(err)
	}
	if err := a.src.start(a.rt); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := a.rt.Close(); err != nil {
			t.Error(err)
		}
	})
	return a
}

// emitNext is Flink's emitNext: one step of the task's loop, reading one
// record; it fails the test when the reader has nothing.
func (a *alignedSource) emitNext() {
	a.t.Helper()
	if err := a.rt.drainMail(); err != nil {
		a.t.Fatal(err)
	}
	if a.waiting() || !a.reader.readable() {
		a.t.Fatal("emitNext with nothing available")
	}
	if _, err := a.src.step(a.rt); err != nil {
		a.t.Fatal(err)
	}
}

// advance moves the clock and runs what came due: the periodic
// watermarks and the report (Flink's TestProcessingTimeService.advance).
func (a *alignedSource) advance(d time.Duration) {
	a.t.Helper()
	a.clk.Advance(d)
	if !a.clk.Now().Before(a.src.next) {
		if err := a.src.periodic(a.rt); err != nil {
			a.t.Fatal(err)
		}
	}
	a.src.reportIfDue()
}

// announce posts the coordinator's bound and lets the task take it.
func (a *alignedSource) announce(max int64) {
	a.t.Helper()
	a.coord.mb.Deliver(protocol.WatermarkAlignment{MaxAllowed: max})
	if err := a.rt.drainMail(); err != nil {
		a.t.Fatal(err)
	}
}

func (a *alignedSource) waiting() bool { return a.src.align.waiting }

func (a *alignedSource) lastReport(want int64) {
	a.t.Helper()
	if n := len(a.coord.reports); n == 0 || a.coord.reports[n-1] != want {
		a.t.Fatalf("reports %v, want the last %d", a.coord.reports, want)
	}
}

func (a *alignedSource) output(want ...int) {
	a.t.Helper()
	if !slices.Equal(a.out, want) {
		a.t.Fatalf("output %v, want %v", a.out, want)
	}
}

func (a *alignedSource) paused(want ...string) {
	a.t.Helper()
	if got := a.reader.pausedSplits(); !slices.Equal(got, want) {
		a.t.Fatalf("paused splits %v, want %v", got, want)
	}
}

func (a *alignedSource) watermarks() []int64 {
	var wms []int64
	for _, e := range a.events {
		if e.Kind == flow.Watermark {
			wms = append(wms, e.Value)
		}
	}
	return wms
}

func (a *alignedSource) wentIdle() bool {
	for _, e := range a.events {
		if e.Kind == flow.WatermarkStatus && e.Value == flow.StatusIdle {
			return true
		}
	}
	return false
}

// punctuated emits every event's timestamp as the watermark (Flink's
// PunctuatedGenerator); odd, only the odd ones.
func punctuated(odd bool) watermark.Strategy[int] {
	return watermark.ForGenerator(func(watermark.Context) watermark.Generator[int] {
		return watermark.Punctuated(func(_ int, ts int64) (int64, bool) { return ts, !odd || ts%2 == 1 })
	})
}

// eager emits the largest timestamp on the event that raises it and at
// every periodic emission (Flink's TestWatermarkGenerator).
func eager() watermark.Strategy[int] {
	return watermark.ForGenerator(func(watermark.Context) watermark.Generator[int] {
		largest := watermark.Min
		return watermark.Funcs[int]{
			Event: func(_ int, ts int64, out watermark.Output) {
				if ts > largest {
					largest = ts
					out.EmitWatermark(largest)
				}
			},
			Periodic: func(out watermark.Output) { out.EmitWatermark(largest) },
		}
	})
}

const hour = time.Hour // an auto-watermark interval that never comes

// TestSourceWatermarkAlignment is Flink's testWatermarkAlignment: a
// subtask whose watermark passed the announced bound reads nothing until a
// bound above it comes, and then reads one record further.
func TestSourceWatermarkAlignment(t *testing.T) {
	a := newAlignedSource(t, punctuated(false), hour)
	a.reader.add(&mockSplit{id: "2", recs: []int{1000, 2000, 3000}})
	a.emitNext()
	a.advance(time.Millisecond)
	a.lastReport(1000)
	a.output(1000)
	if a.waiting() {
		t.Fatal("waiting under no bound")
	}
	a.announce(999)
	if !a.waiting() {
		t.Fatal("not waiting with its watermark past the bound")
	}
	a.advance(time.Millisecond)
	a.lastReport(1000)
	a.output(1000)
	a.announce(1001)
	if a.waiting() {
		t.Fatal("waiting under a bound above its watermark")
	}
	a.emitNext()
	if !a.waiting() {
		t.Fatal("not waiting after the record past the bound")
	}
	a.advance(time.Millisecond)
	a.lastReport(2000)
	a.output(1000, 2000)
}

// TestSourceWaitingWakesOnAnnouncement: a waiting subtask's loop blocks
// until mail comes, not spinning, and reads on once the announced bound
// lets it (the task's own loop, on its goroutine).
func TestSourceWaitingWakesOnAnnouncement(t *testing.T) {
	a := newAlignedSource(t, punctuated(false), hour)
	a.reader.add(&mockSplit{id: "s", recs: []int{1000, 2000}})
	a.emitNext()
	a.announce(500)
	done := make(chan error, 1)
	go func() {
		_, err := a.src.step(a.rt) // waits for mail
		done <- err
	}()
	a.coord.mb.Deliver(protocol.WatermarkAlignment{MaxAllowed: 5000})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	a.emitNext()
	a.output(1000, 2000)
}

// TestSourceIdleReportsMax follows Flink's testWatermarkAlignmentWithIdleness
// and testWatermarkAlignmentWithoutSplit: nothing is reported before the
// subtask's first watermark; an idle subtask (here one without a split for
// two periodic intervals) reports the maximal watermark, and reports its
// watermark again once it reads.
func TestSourceIdleReportsMax(t *testing.T) {
	a := newAlignedSource(t, punctuated(true), 10*time.Millisecond)
	a.advance(time.Millisecond)
	a.advance(time.Millisecond)
	if len(a.coord.reports) != 0 {
		t.Fatalf("reports %v before any watermark", a.coord.reports)
	}
	a.reader.add(&mockSplit{id: "2", recs: []int{1}, finite: true})
	a.emitNext()
	a.emitNext() // the split's end
	a.advance(time.Millisecond)
	a.lastReport(1)
	a.announce(101)
	a.advance(10 * time.Millisecond) // no split: one interval
	a.advance(10 * time.Millisecond) // and a second: idle
	if !a.wentIdle() {
		t.Fatal("the subtask without a split did not go idle")
	}
	a.lastReport(watermark.Max)
	a.announce(watermark.Max) // every subtask of the group idle
	a.reader.add(&mockSplit{id: "3", recs: []int{2}})
	a.emitNext() // an even record: no watermark, but active again
	a.advance(time.Millisecond)
	a.lastReport(1)
	a.output(1, 2)
}

// TestSourceReportedWatermarkDoesNotDecrease is Flink's
// testReportedWatermarkDoNotDecrease.
func TestSourceReportedWatermarkDoesNotDecrease(t *testing.T) {
	a := newAlignedSource(t, punctuated(false), hour)
	a.reader.add(&mockSplit{id: "2", recs: []int{2000}})
	a.emitNext()
	a.advance(time.Millisecond)
	a.lastReport(2000)
	a.reader.add(&mockSplit{id: "3", recs: []int{1000}})
	a.emitNext()
	a.advance(time.Millisecond)
	a.lastReport(2000)
}

// TestSourceFinishedReportsMax is Flink's
// testWatermarkAlignmentWhileSubtaskFinished: at the end of its input the
// subtask reports the maximal watermark.
func TestSourceFinishedReportsMax(t *testing.T) {
	a := newAlignedSource(t, punctuated(false), hour)
	a.reader.add(&mockSplit{id: "1", recs: []int{1}, finite: true})
	a.emitNext()
	a.emitNext() // the end of the split
	a.reader.noMore = true
	done, err := a.src.step(a.rt)
	if err != nil || !done {
		t.Fatalf("step at the end: %v %v", done, err)
	}
	a.lastReport(watermark.Max)
	a.output(1)
}

// TestSourceStopWhileWaiting follows Flink's
// testStopWhileWaitingForWatermarkAlignment: a stop-with-savepoint
// reaches a subtask waiting for alignment, which sends its barrier and
// reads nothing more.
func TestSourceStopWhileWaiting(t *testing.T) {
	a := newAlignedSource(t, punctuated(false), hour)
	a.reader.add(&mockSplit{id: "2", recs: []int{1000, 2000}})
	a.emitNext()
	a.announce(999)
	a.rt.mb.Deliver(protocol.Trigger{Checkpoint: 1, Stop: true})
	if err := a.rt.drainMail(); err != nil {
		t.Fatal(err)
	}
	if !a.src.stopped {
		t.Fatal("not stopped")
	}
	if last := a.events[len(a.events)-1]; last.Kind != flow.Barrier || last.Value != 1 {
		t.Fatalf("last event %+v, want barrier 1", last)
	}
}

// TestSplitWatermarkAlignment is Flink's testSplitWatermarkAlignment: a
// split whose watermark passed the bound is paused and resumed per split,
// by the announcements and by its own watermark.
func TestSplitWatermarkAlignment(t *testing.T) {
	a := newAlignedSource(t, eager(), 10*time.Millisecond)
	a.reader.add(&mockSplit{id: "0", recs: []int{5, 11}}, &mockSplit{id: "1", recs: []int{3, 12}})
	a.advance(10 * time.Millisecond) // the splits get their outputs (Flink: on AddSplitEvent)
	a.emitNext()                     // split 0 emits 5
	a.announce(4)
	a.paused("0")
	a.announce(5)
	a.paused()
	a.emitNext() // split 0 emits 11
	a.emitNext() // split 1 emits 3
	a.paused("0")
	a.emitNext() // split 1 emits 12
	a.paused("0", "1")
	a.output(5, 11, 3, 12)
	if !a.waiting() {
		t.Fatal("both splits past the bound, and the subtask does not wait")
	}
}

// TestSplitWatermarkAlignmentWithFinishedSplit is Flink's
// testSplitWatermarkAlignmentWithFinishedSplit: a finished split is not
// paused.
func TestSplitWatermarkAlignmentWithFinishedSplit(t *testing.T) {
	a := newAlignedSource(t, eager().WithIdleness(100*time.Millisecond), hour)
	a.reader.add(&mockSplit{id: "0", recs: []int{5}, finite: true}, &mockSplit{id: "1", recs: []int{3}})
	for a.reader.readable() {
		a.emitNext()
	}
	a.announce(4)
	a.paused()
}

// TestMultiSplitWatermarkAlignmentAndIdleness is Flink's
// testMultiSplitWatermarkAlignmentAndIdleness: a paused split does not go
// idle while the other runs on (its idleness clock stands still), so the
// subtask's watermark never passes the paused split's.
func TestMultiSplitWatermarkAlignmentAndIdleness(t *testing.T) {
	const idle = 100 * time.Millisecond
	a := newAlignedSource(t, eager().WithIdleness(idle), 10*time.Millisecond)
	const maxAllowed, maxEmitted = 4, 5
	a.reader.add(&mockSplit{id: "0", recs: []int{maxEmitted, maxEmitted + 100}},
		&mockSplit{id: "1", recs: []int{3, 3, 3, 3, 3, 3, 3, maxEmitted + 100}})
	a.advance(10 * time.Millisecond) // the splits get their outputs
	a.emitNext()                     // split 0 emits its first record
	a.announce(maxAllowed)
	a.paused("0")
	for a.reader.readable() && !a.waiting() {
		a.advance(idle - time.Millisecond)
		a.emitNext()
	}
	for range 5 { // more time passes: the paused split stays put
		a.advance(idle - time.Millisecond)
	}
	a.paused("0", "1")
	for _, wm := range a.watermarks() {
		if wm > maxEmitted {
			t.Fatalf("watermark %d past the paused split's %d: %v", wm, maxEmitted, a.watermarks())
		}
	}
	a.output(maxEmitted, 3, 3, 3, 3, 3, 3, 3, maxEmitted+100) // the paused split's second record never
}

// TestSingleSplitWatermarkAlignmentAndIdleness is Flink's
// testSingleSplitWatermarkAlignmentAndIdleness: a subtask whose only split
// waits for alignment does not go idle however long it waits.
func TestSingleSplitWatermarkAlignmentAndIdleness(t *testing.T) {
	const idle = 100 * time.Millisecond
	a := newAlignedSource(t, eager().WithIdleness(idle), 10*time.Millisecond)
	a.reader.add(&mockSplit{id: "0", recs: []int{1, 1, 1, 1, 5, 105}})
	a.announce(4)
	for range 10 {
		if a.reader.readable() && !a.waiting() {
			a.emitNext()
		}
		a.advance(idle)
	}
	if a.wentIdle() {
		t.Fatal("the waiting subtask went idle")
	}
	a.output(1, 1, 1, 1, 5)
	a.paused("0")
}

// TestIdleSplitNotPaused follows Flink's SourceOperator (its
// currentlyIdleSplits): an announcement neither pauses nor resumes an idle
// split, however far ahead its watermark; the split's next record makes it
// active, and a split active again past the bound is paused.
func TestIdleSplitNotPaused(t *testing.T) {
	const idle = 100 * time.Millisecond
	a := newAlignedSource(t, eager().WithIdleness(idle), 10*time.Millisecond)
	ahead := &mockSplit{id: "ahead", recs: []int{50}}
	a.reader.add(ahead, &mockSplit{id: "behind", recs: []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}})
	a.advance(10 * time.Millisecond)
	a.emitNext() // ahead emits 50
	for range 13 {
		a.advance(10 * time.Millisecond)
		a.emitNext() // behind emits 1, 2, ...
	}
	if !a.src.splits.Idle("ahead") {
		t.Fatal("the split without events for 130 ms is not idle")
	}
	a.announce(20)
	a.paused()
	a.reader.mu.Lock()
	ahead.recs = append(ahead.recs, 60)
	a.reader.mu.Unlock()
	a.emitNext() // ahead emits 60: active again, past the bound
	a.paused("ahead")
	a.output(50, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 60)
}
