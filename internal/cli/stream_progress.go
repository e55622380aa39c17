package cli

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/watermark"
)

// streamProgressEvery is how often a stream job's status block is redrawn.
const streamProgressEvery = time.Second

// streamProgress draws the status block of a running stream job on a
// terminal: Started hands it the job, stop clears the block and, for a job
// that checkpoints, leaves the checkpoint line of its end.
type streamProgress struct {
	checkpointing bool // draw the checkpoint line
	job           *stream.Job
	w             io.Writer
	name          string // the job's command: "run state-machine"
	start         time.Time

	mu    sync.Mutex
	quit  chan struct{}
	wg    sync.WaitGroup
	lines int // lines of the block on screen
}

// streamProgress returns the status block of job on w, or nil when w is not
// a terminal or --progress=false.
func (g *globalOptions) streamProgress(w io.Writer, name string) *streamProgress {
	if !g.progress || !isTerminal(w) {
		return nil
	}
	return &streamProgress{w: w, name: name, quit: make(chan struct{})}
}

// started redraws the block every streamProgressEvery until stop.
func (p *streamProgress) started(j *stream.Job) {
	p.start = time.Now()
	p.mu.Lock()
	p.job = j
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(streamProgressEvery)
		defer t.Stop()
		for {
			select {
			case <-p.quit:
				return
			case <-j.Done():
				return
			case <-t.C:
				var ck *stream.CheckpointHistory
				if p.checkpointing {
					h := j.Checkpoints()
					ck = &h
				}
				p.draw(renderStreamProgress(p.name, time.Since(p.start), j.Overview(), ck))
			}
		}
	}()
}

// draw replaces the block on screen with block.
func (p *streamProgress) draw(block string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearLocked()
	fmt.Fprint(p.w, block)
	p.lines = strings.Count(block, "\n")
}

func (p *streamProgress) clearLocked() {
	if p.lines > 0 {
		fmt.Fprintf(p.w, "\033[%dA\r\033[J", p.lines)
		p.lines = 0
	}
}

// stop ends the redrawing and clears the block.
func (p *streamProgress) stop() {
	close(p.quit)
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearLocked()
	if p.checkpointing && p.job != nil {
		fmt.Fprintf(p.w, "weir %s: %s\n", p.name, checkpointLine(p.job.Checkpoints()))
	}
}

// renderStreamProgress returns the status block of a stream job: a title
// line, then one line per operator, chained operators under their task's
// head: records in and out per second over the snapshot's window, and on
// each task's first line the watermark's lag behind the job's clock and
// the shares of time busy, idle and backpressured; then, for a job that
// checkpoints (ck not nil), a line on its checkpoints.
func renderStreamProgress(name string, elapsed time.Duration, s stream.Overview, ck *stream.CheckpointHistory) string {
	var b strings.Builder
	fmt.Fprintf(&b, "weir %s: %s\n", name, elapsed.Round(100*time.Millisecond))
	fmt.Fprintf(&b, "  %-32s %3s %9s %9s %10s %5s %5s %6s\n", "operator", "p", "in/s", "out/s", "wm lag", "busy", "idle", "backpr")
	for _, v := range s.Vertices {
		for i, o := range v.Operators {
			op := o.Name
			if i > 0 {
				op = "└ " + op
			}
			fmt.Fprintf(&b, "  %-32s ", clip(op, 32))
			if i == 0 {
				fmt.Fprintf(&b, "%3d", v.Parallelism)
			} else {
				fmt.Fprintf(&b, "%3s", "")
			}
			fmt.Fprintf(&b, " %9s %9s", humanRate(o.RecordsInPerSecond), humanRate(o.RecordsOutPerSecond))
			if i == 0 {
				fmt.Fprintf(&b, " %10s %5s %5s %6s", watermarkLagText(v), pct(v.Busy), pct(v.Idle), pct(v.Backpressured))
			}
			b.WriteString("\n")
		}
	}
	if ck != nil {
		b.WriteString("  " + checkpointLine(*ck) + "\n")
	}
	return strings.ReplaceAll(b.String(), " \n", "\n")
}

// checkpointLine sums up a job's checkpoints as Flink's checkpoint overview
// does: how many completed, the latest one's duration, size written and
// full size, alignment and bytes in flight, the last restore's duration and
// the restarts.
func checkpointLine(h stream.CheckpointHistory) string {
	var b strings.Builder
	if len(h.Completed) == 0 {
		b.WriteString("checkpoints: none completed")
	} else {
		c := h.Completed[len(h.Completed)-1]
		fmt.Fprintf(&b, "checkpoints: %d completed, latest #%d in %s, %s", len(h.Completed), c.ID,
			c.Duration.Round(time.Millisecond), humanBytes(c.Size))
		if c.FullSize != c.Size {
			fmt.Fprintf(&b, " (full %s)", humanBytes(c.FullSize))
		}
		fmt.Fprintf(&b, ", aligned in %s", c.Alignment.Round(time.Millisecond))
		if c.InFlight > 0 {
			fmt.Fprintf(&b, ", %s in flight", humanBytes(c.InFlight))
		}
	}
	if n := len(h.Restores); n > 0 {
		fmt.Fprintf(&b, "; restored in %s", h.Restores[n-1].Round(time.Millisecond))
	}
	if h.Restarts > 0 {
		fmt.Fprintf(&b, "; restarts %d", h.Restarts)
	}
	return b.String()
}

// clip cuts s to n runes.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// humanRate prints records per second: 950, 12.3K, 4.5M.
func humanRate(r float64) string {
	switch {
	case r >= 1e6:
		return fmt.Sprintf("%.1fM", r/1e6)
	case r >= 1e3:
		return fmt.Sprintf("%.1fK", r/1e3)
	}
	return fmt.Sprintf("%.0f", r)
}

// watermarkLagText is a task's watermark lag: "-" before any watermark,
// "end" at the maximal one.
func watermarkLagText(v stream.VertexOverview) string {
	switch v.Watermark {
	case watermark.Min:
		return "-"
	case watermark.Max:
		return "end"
	}
	return v.WatermarkLag.Round(time.Millisecond).String()
}

func pct(f float64) string { return fmt.Sprintf("%.0f%%", f*100) }
