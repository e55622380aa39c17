package task

import (
	"fmt"
	"time"

	"github.com/weirdata/weir/stream/internal/protocol"
	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/watermark"
)

// Aligner is the coordinator of a source's watermark alignment as its
// subtasks see it (coordinator.SourceAlignment): where they report their
// watermark every Interval, and whose announcements reach the mailbox they
// registered.
type Aligner interface {
	Interval() time.Duration
	Register(subtask int, t protocol.Task)
	Report(r protocol.ReportedWatermark)
}

// alignment is a source subtask's side of watermark alignment (Flink's
// SourceOperator with WatermarkAlignmentParams, FLIP-182 and FLIP-217).
// Every interval the subtask reports the watermark it emitted last (Max
// when it is idle or its input ended; nothing before its first). The
// coordinator announces the bound, the group's least plus the drift. A
// split whose watermark passed the bound is paused, in the reader and in
// its idleness clock, and resumed by an announcement that reaches it
// again; idle splits are neither paused nor resumed. While the subtask's
// own watermark is past the bound it reads nothing (waiting) and every
// split's idleness clock stands still.
type alignment struct {
	coord   Aligner
	id      protocol.TaskID
	every   time.Duration
	next    time.Time // the next report
	max     int64     // the bound announced last; Max before any
	latest  int64     // the watermark emitted last; Min before any
	waiting bool      // latest > max: the subtask reads nothing
	paused  map[string]bool
	pauser  source.SplitPauser // the reader's, nil when it cannot pause
}

func newAlignment(a Aligner) *alignment {
	return &alignment{coord: a, every: a.Interval(), max: watermark.Max, latest: watermark.Min, paused: map[string]bool{}}
}

// report sends the subtask's watermark to the coordinator, if it has one.
func (a *alignment) report(idle bool) {
	if a.latest == watermark.Min {
		return
	}
	wm := a.latest
	if idle {
		wm = watermark.Max
	}
	a.coord.Report(protocol.ReportedWatermark{Task: a.id, Watermark: wm})
}

// reportIfDue reports the subtask's watermark when the update interval
// passed since the last report (Flink's emitLatestWatermark, scheduled
// every update interval).
func (s *Source[T]) reportIfDue() {
	a := s.align
	if now := s.rt.clock.Now(); !now.Before(a.next) {
		a.report(s.rt.idle)
		a.next = now.Add(a.every)
		s.rearm()
	}
}

// onAlignment takes an announced bound: the subtask waits or reads on, and
// its splits pause or resume (Flink's handleOperatorEvent of a
// WatermarkAlignmentEvent: checkWatermarkAlignment, then
// checkSplitWatermarkAlignment).
func (s *Source[T]) onAlignment(m protocol.WatermarkAlignment) error {
	a := s.align
	a.max = m.MaxAllowed
	s.checkWaiting()
	var pause, resume []string
	for _, sp := range s.reader.Positions() {
		id := sp.ID
		if s.splits.Idle(id) {
			continue
		}
		if s.splits.Watermark(id) > a.max {
			if !a.paused[id] {
				pause = append(pause, id)
			}
		} else if a.paused[id] {
			resume = append(resume, id)
		}
	}
	return s.pauseOrResume(pause, resume)
}

// checkWaiting starts or ends the subtask's wait for alignment as its
// watermark and the bound say.
func (s *Source[T]) checkWaiting() {
	a := s.align
	if w := a.max < a.latest; w != a.waiting {
		a.waiting = w
		for _, sp := range s.reader.Positions() {
			s.splits.SetPaused(sp.ID, w || a.paused[sp.ID])
		}
	}
}

// maybePause pauses split id when its watermark passed the bound, unless
// it is idle or paused already (Flink's updateCurrentSplitWatermark).
func (s *Source[T]) maybePause(id string) error {
	a := s.align
	if a.paused[id] || s.splits.Watermark(id) <= a.max || s.splits.Idle(id) {
		return nil
	}
	return s.pauseOrResume([]string{id}, nil)
}

// pauseOrResume pauses and resumes splits in the reader and their
// idleness clocks.
func (s *Source[T]) pauseOrResume(pause, resume []string) error {
	if len(pause) == 0 && len(resume) == 0 {
		return nil
	}
	a := s.align
	if a.pauser == nil {
		return fmt.Errorf("stream: %s: watermark alignment: the reader %T cannot pause splits (source.SplitPauser)", s.name, s.reader)
	}
	a.pauser.PauseOrResumeSplits(pause, resume)
	for _, id := range pause {
		a.paused[id] = true
		s.splits.SetPaused(id, true)
	}
	for _, id := range resume {
		delete(a.paused, id)
		s.splits.SetPaused(id, a.waiting)
	}
	return nil
}
