package streaming

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/weirdata/weir/formats/csv"
	"github.com/weirdata/weir/stream/watermark"
	"github.com/weirdata/weir/stream/window"
)

// checkInput opens path as the CSV of T before a job reads it, so that a
// missing file, an empty file or a header without the columns is an error
// before anything runs.
func checkInput[T any](path string, opts csv.Options) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if st.Mode().IsRegular() && st.Size() == 0 {
		return fmt.Errorf("%s: no header line", path)
	}
	_, err = csv.Open[T](path, opts)
	return err
}

// inputError is a record of an input file that a job refuses: the file, the
// line and the column.
type inputError struct {
	path   string
	line   int64
	column string
	err    error
}

func (e *inputError) Error() string {
	return fmt.Sprintf("%s line %d, column %s: %v", e.path, e.line, e.column, e.err)
}

func (e *inputError) Unwrap() error { return e.err }

// Unrecoverable reports true: the record is read again at the same offset
// after a restart, so no restart can cure it.
func (e *inputError) Unrecoverable() bool { return true }

// inputCause returns the error of a job that read a file: the bad record it
// met (an *inputError or a *csv.RecordError), which names the file, the line
// and the column, else err itself.
func inputCause(err error) error {
	var ie *inputError
	var re *csv.RecordError
	switch {
	case errors.As(err, &ie):
		return ie
	case errors.As(err, &re):
		return re
	}
	return err
}

// badTime is the error of the record at offset in path whose time ts (in the
// column named column) has no window of spec: times from lo to hi have one.
func badTime(path string, offset int64, column string, ts int64, spec string, lo, hi int64) error {
	line, err := lineAt(path, offset)
	if err != nil {
		return err
	}
	why := fmt.Errorf("the time %d has no %s window in int64 milliseconds (times from %d to %d have one)", ts, spec, lo, hi)
	if ts == math.MinInt64 {
		why = fmt.Errorf("the time %d is math.MinInt64, which marks a record without a timestamp", ts)
	}
	return &inputError{path: path, line: line, column: column, err: why}
}

// lineAt returns the number of the line of path that holds byte offset.
func lineAt(path string, offset int64) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	line := int64(1)
	r := io.LimitReader(f, offset)
	for {
		n, err := r.Read(buf)
		line += int64(bytes.Count(buf[:n], []byte{'\n'}))
		if err == io.EOF {
			return line, nil
		}
		if err != nil {
			return 0, fmt.Errorf("read %s: %w", path, err)
		}
	}
}

// recordAt returns the CSV record that starts at offset in f: the bytes up
// to the first newline after an even number of quotes (RFC 4180: a newline
// inside quotes is data), without the newline and a '\r' before it.
func recordAt(f *os.File, offset int64) (string, error) {
	var rec []byte
	buf := make([]byte, 4096)
	quotes := 0
	for {
		n, err := f.ReadAt(buf, offset+int64(len(rec)))
		for i, c := range buf[:n] {
			if c == '"' {
				quotes++
			} else if c == '\n' && quotes%2 == 0 {
				rec = append(rec, buf[:i]...)
				return string(bytes.TrimSuffix(rec, []byte{'\r'})), nil
			}
		}
		rec = append(rec, buf[:n]...)
		if err == io.EOF {
			return string(bytes.TrimSuffix(rec, []byte{'\r'})), nil
		}
		if err != nil {
			return "", fmt.Errorf("read %s: %w", f.Name(), err)
		}
	}
}

// timeRange returns the smallest and the largest timestamp that have windows
// of a (those outside reach past the int64 range, and math.MinInt64 is no
// timestamp). Every timestamp between them has windows: a window holding ts
// fits when one holding a timestamp further out does.
func timeRange(a window.Assigner[window.TimeWindow]) (lo, hi int64) {
	fits := func(ts int64) bool {
		_, err := a.AssignWindows(nil, ts, nil, nil)
		return !errors.Is(err, window.ErrOutOfRange)
	}
	// hi: the largest ts in [0, MaxInt64] that fits, by bisection
	lo, hi = 0, math.MaxInt64
	for lo < hi {
		mid := lo + (hi-lo)/2 + 1
		if fits(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	top := hi
	// lo: the smallest ts in [MinInt64+1, 0] that fits
	lo, hi = math.MinInt64+1, 0
	for lo < hi {
		mid := lo + (hi-lo)/2
		if fits(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo, top
}

// heldWatermarks is window-stats' watermark generator. After every event
// the watermark is the largest timestamp seen - bound - 1 (Min until that
// is above Min), as if a punctuated generator emitted it on every event; it
// is sent only ahead of an event it can change, every 4,096 events and at
// each periodic emission. Ahead of event e at ts it is needed when it is at
// or above ts - 1: an event-time window operator decides an event's fate by
// comparing the watermark with ts + lateness (late element), its windows'
// ends - 1 + lateness (late window) and ends - 1 (a late firing), and the
// windows e can join (or merge with) end at ts or later, so their timers
// are at ts - 1 or later; a watermark below ts - 1 fires no timer of them
// and changes none of those answers. Holding it back only delays firings of
// other windows, which no event in between touches. The source hands it a
// batch's timestamps at once (watermark.BeforeTimestampsGenerator).
type heldWatermarks[T any] struct {
	bound   int64
	maxTs   int64
	pending int64 // the watermark after the events seen
	sent    int64 // the watermark sent last
	since   int   // events since the last send
}

// heldEvery is how many events a held watermark waits at most.
const heldEvery = 4096

func newHeldWatermarks[T any](bound int64) *heldWatermarks[T] {
	return &heldWatermarks[T]{bound: bound, maxTs: watermark.Min, pending: watermark.Min, sent: watermark.Min}
}

func (g *heldWatermarks[T]) OnBeforeEvent(_ T, ts int64, out watermark.Output) {
	if g.pending > g.sent && (g.pending >= ts-1 || g.since >= heldEvery) {
		g.send(out)
	}
}

func (g *heldWatermarks[T]) OnEvent(_ T, ts int64, _ watermark.Output) {
	g.since++
	g.observe(ts)
}

// OnBeforeTimestamps is OnBeforeEvent for ts[0]; it returns how many events
// of ts go before the next one that needs the watermark sent first.
func (g *heldWatermarks[T]) OnBeforeTimestamps(ts []int64, out watermark.Output) int {
	if g.pending > g.sent && (g.pending >= ts[0]-1 || g.since >= heldEvery) {
		g.send(out)
	}
	maxTs, pending := g.maxTs, g.pending
	for j := 1; j < len(ts); j++ {
		if t := ts[j-1]; t > maxTs {
			maxTs = t
			if t > watermark.Min+g.bound+1 {
				pending = t - g.bound - 1
			}
		}
		if pending > g.sent && (pending >= ts[j]-1 || g.since+j >= heldEvery) {
			return j
		}
	}
	return len(ts)
}

// OnTimestamps is OnEvent for a run of events.
func (g *heldWatermarks[T]) OnTimestamps(ts []int64) {
	g.since += len(ts)
	for _, t := range ts {
		g.observe(t)
	}
}

// observe raises the largest timestamp seen and the watermark after it.
func (g *heldWatermarks[T]) observe(ts int64) {
	if ts > g.maxTs {
		g.maxTs = ts
		if ts > watermark.Min+g.bound+1 {
			g.pending = ts - g.bound - 1
		}
	}
}

func (g *heldWatermarks[T]) OnPeriodicEmit(out watermark.Output) {
	if g.pending > g.sent {
		g.send(out)
	}
}

func (g *heldWatermarks[T]) send(out watermark.Output) {
	out.EmitWatermark(g.pending)
	g.sent, g.since = g.pending, 0
}
