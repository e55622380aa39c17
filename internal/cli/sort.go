package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/formats"
	"github.com/weirdata/weir/formats/text"
)

// runtimeOverhead is what the Go runtime may hold beyond the job's budget (stacks,
// garbage not yet collected, spill buffers between uses); the job sets the
// runtime's soft memory limit to budget + runtimeOverhead.
const runtimeOverhead = 40 << 20

// sortOptions are the flags of `weir sort`.
type sortOptions struct {
	input, output string
	codec         string
}

func newSortCommand(g *globalOptions) *cobra.Command {
	o := &sortOptions{}
	cmd := &cobra.Command{
		Use:   "sort --input FILE --output FILE",
		Short: "Sort the lines of a text file bytewise, as LC_ALL=C sort does",
		Long: `Sort the lines of a text file of any size bytewise, exactly as LC_ALL=C sort does:
a last line without a newline gets one, and empty lines, carriage returns, NUL bytes
and invalid UTF-8 are just bytes. The sort stays within --memory, spilling sorted
runs to --tmp, and runs --parallelism sorters at once on key ranges of the input.
The output is written next to --output under a temporary name and renamed when
complete; on error or interrupt no output and no spill file remain.`,
		Args: cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command) error {
			if err := g.validate(); err != nil {
				return err
			}
			codec, err := parseCodec(o.codec)
			if err != nil {
				return err
			}
			job := &sortJob{
				input:       o.input,
				output:      o.output,
				tmp:         g.tmp,
				memory:      int64(g.memory),
				parallelism: g.workers(),
				codec:       codec,
			}
			if isTerminal(cmd.ErrOrStderr()) {
				job.progress = cmd.ErrOrStderr()
			}
			stopProfile, err := g.startProfile()
			if err != nil {
				return err
			}
			err = job.run(cmd.Context())
			if perr := stopProfile(); err == nil && perr != nil {
				err = perr
			}
			if err != nil {
				return fmt.Errorf("sort: %w", err)
			}
			return nil
		}),
	}
	f := cmd.Flags()
	f.StringVar(&o.input, "input", "", "file whose lines to sort (required)")
	f.StringVar(&o.output, "output", "", "file to write the sorted lines to (required)")
	f.StringVar(&o.codec, "spill-codec", "none", "compression of spill files: none, s2 or zstd")
	_ = f.MarkHidden("spill-codec")
	_ = cmd.MarkFlagRequired("input")
	_ = cmd.MarkFlagRequired("output")
	return cmd
}

func parseCodec(s string) (dataset.SpillCodec, error) {
	switch s {
	case "none":
		return dataset.SpillNone, nil
	case "s2":
		return dataset.SpillS2, nil
	case "zstd":
		return dataset.SpillZstd, nil
	}
	return 0, &usageError{err: fmt.Errorf("--spill-codec %q: want none, s2 or zstd", s)}
}

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0 && f.Name() != os.DevNull
}

// sortJob is one run of `weir sort`, a DataSet program on the runtime:
//
//	Read input (text splits) ──range-partition by bounds sampled from the
//	file──► count each range's lines and bytes ──► SortPartition (each range
//	sorted in managed memory, spilling sorted runs) ──► write every range at its
//	offset of one temporary file ──► rename to the output when the job succeeded
//
// Sampling the file up front (reading a few hundred 4 KiB chunks) gives the
// range bounds before the job starts, so the readers route lines at once instead
// of holding them back for the runtime's own sampling. Each range's subtask adds
// up the bytes it receives (chained in front of its sort, so no line is routed
// twice). A range's writer waits until every range's input has ended, which
// happens when the readers finish, at about the time the sorts start emitting;
// then it knows the sizes of the ranges before it, and all ranges write at once,
// each to its own part of the output.
type sortJob struct {
	input, output, tmp string
	memory             int64
	parallelism        int
	codec              dataset.SpillCodec
	progress           io.Writer // nil: no progress lines

	read    atomic.Int64 // input bytes read
	written atomic.Int64 // output bytes written
	phase   atomic.Int32

	summary sortSummary // what the job did, filled in by a successful run
}

// sortSummary is what a `weir sort` run did.
type sortSummary struct {
	Lines, Bytes int64         // lines and bytes sorted
	Ranges       int           // key ranges sorted in parallel
	SpilledBytes int64         // bytes written to spill files
	PeakMemory   int64         // peak bytes reserved from the memory manager
	Plan         *dataset.Plan // the plan that ran, with its actuals
}

// Phases shown in progress lines.
const (
	phaseRead int32 = iota
	phaseMerge
)

// sortHook, when set by a test, is called with "read" after every 1024 lines
// read and "write" after every buffer written.
var sortHook func(event string)

// run sorts the input into the output, leaving nothing behind on error.
func (j *sortJob) run(ctx context.Context) (err error) {
	in, err := os.Open(j.input)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	if st.IsDir() {
		return fmt.Errorf("input %s is a directory", j.input)
	}
	if err := checkDir(j.tmp, "spill directory"); err != nil {
		return err
	}
	prevLimit := debug.SetMemoryLimit(j.memory + runtimeOverhead)
	defer debug.SetMemoryLimit(prevLimit)

	var bounds []string
	if j.parallelism > 1 && st.Mode().IsRegular() && st.Size() > 0 {
		if bounds, err = sampleBounds(in, st.Size(), j.parallelism); err != nil {
			return err
		}
	}
	parts := len(bounds) + 1
	src, err := text.OpenWith(j.input, text.Options{ChunkSize: pow2Clamp(j.memory/64, 64<<10, 1<<20)})
	if err != nil {
		return err
	}
	env := dataset.New(dataset.Options{
		Parallelism: parts,
		Memory:      j.memory,
		SegmentSize: pow2Clamp(j.memory/256, 4<<10, 1<<20),
		TmpDir:      j.tmp,
		Spill:       dataset.SpillOptions{Codec: j.codec, BlockSize: pow2Clamp(j.memory/1024, 4<<10, 256<<10)},
	})
	sizes := newRangeSizes(parts)
	lines := dataset.FromSource(env, "input", src)
	if parts > 1 {
		lines = dataset.PartitionByRangeBounds(lines, dataset.Self[string], bounds)
	}
	lines = dataset.MapPartition(lines, func(in iter.Seq[string], emit func(string)) {
		j.countRange(bounds, sizes, in, emit)
	})
	sorted := dataset.SortPartition(lines, dataset.Self[string], dataset.Ascending)
	sink := &rangeFileSink{path: j.output, sizes: sizes, written: &j.written, phase: &j.phase,
		bufSize: pow2Clamp(j.memory/32, 4<<10, 4<<20)}
	dataset.Output(sorted, "output", sink)

	stop := j.startProgress(st.Size())
	defer stop()
	res, err := env.Execute(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted: %w", ctx.Err())
		}
		return err
	}
	j.summary = sortSummary{Lines: sizes.lines, Bytes: j.written.Load(), Ranges: parts,
		PeakMemory: res.Metrics.PeakMemory, SpilledBytes: res.Metrics.SpilledBytes(), Plan: res.Plan}
	return nil
}

// checkDir returns an error naming what dir is for unless it is a directory
// ("" is the system's temporary directory).
func checkDir(dir, what string) error {
	if dir == "" {
		return nil
	}
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("%s: %s is not a directory", what, dir)
	}
	return nil
}

// countRange passes the lines of one key range on to its sort, adding their
// bytes (as the output holds them) to the range's size and to the bytes read
// for the progress line. The range is that of its first line (an empty range
// has no size to add).
func (j *sortJob) countRange(bounds []string, sizes *rangeSizes, in iter.Seq[string], emit func(string)) {
	r, lines := -1, int64(0)
	var size, unreported int64
	for l := range in {
		if r < 0 {
			r = rangeOf(bounds, l)
		}
		emit(l)
		size += int64(len(l)) + 1
		if lines++; lines%1024 == 0 {
			j.read.Add(size - unreported)
			unreported = size
			if sortHook != nil {
				sortHook("read")
			}
		}
	}
	j.read.Add(size - unreported)
	sizes.end(r, size, lines)
}

// rangeSizes is the byte size of every key range's lines, as the output holds
// them, added up as the ranges' inputs end.
type rangeSizes struct {
	mu      sync.Mutex
	size    []int64
	lines   int64
	pending int           // ranges whose input has not ended
	ended   chan struct{} // closed when pending reaches zero
}

func newRangeSizes(parts int) *rangeSizes {
	return &rangeSizes{size: make([]int64, parts), pending: parts, ended: make(chan struct{})}
}

// end records that range i's input ended with size bytes in lines lines; i
// is the range, -1 when it had none.
func (r *rangeSizes) end(i int, size, lines int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if i >= 0 {
		r.size[i] += size
	}
	r.lines += lines
	if r.pending--; r.pending == 0 {
		close(r.ended)
	}
}

// offset returns where range i starts in the output and the output's size,
// waiting until every range's input has ended.
func (r *rangeSizes) offset(ctx context.Context, i int) (off, total int64, err error) {
	select {
	case <-r.ended:
	default:
		select {
		case <-r.ended:
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for p, n := range r.size {
		if p < i {
			off += n
		}
		total += n
	}
	return off, total, nil
}

// rangeOf returns the range of line under PartitionByRangeBounds' rule: range
// i holds bounds[i-1] < line <= bounds[i].
func rangeOf(bounds []string, line string) int {
	lo, hi := 0, len(bounds)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if bounds[m] < line {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// rangeFileSink writes the sorted ranges into one file: range i's writer writes
// at the range's offset, so all ranges write at once. The file has a temporary
// name until the job commits; then the last writer's Commit renames it.
type rangeFileSink struct {
	path    string
	sizes   *rangeSizes
	written *atomic.Int64
	phase   *atomic.Int32
	bufSize int // each writer's buffer

	mu        sync.Mutex
	sized     bool     // the file has its final length
	f         *os.File // the temporary output, shared by the writers
	open      int      // writers created and not yet committed or aborted
	committed int
	failed    bool
}

func (s *rangeFileSink) Create(ctx context.Context, i, n int) (formats.Writer[string], error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		f, err := os.CreateTemp(filepath.Dir(s.path), "."+filepath.Base(s.path)+".weir-*")
		if err != nil {
			return nil, fmt.Errorf("create output: %w", err)
		}
		s.f, s.committed, s.failed, s.sized = f, 0, false, false
	}
	s.open++
	return &rangeWriter{ctx: ctx, s: s, i: i, n: n, off: -1, buf: make([]byte, 0, s.bufSize)}, nil
}

// release ends one writer; the last one closes the file and renames it (all
// committed) or removes it.
func (s *rangeFileSink) release(commit bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if commit {
		s.committed++
	} else {
		s.failed = true
	}
	if s.open--; s.open > 0 {
		return nil
	}
	f := s.f
	s.f = nil
	if s.failed {
		f.Close()
		os.Remove(f.Name())
		return nil
	}
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(s.path); err == nil {
		mode = fi.Mode().Perm()
	}
	err := f.Chmod(mode)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), s.path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("output %s: %w", s.path, err)
	}
	return nil
}

// rangeWriter writes one range; see rangeFileSink.
type rangeWriter struct {
	_     cacheLinePad // the writers of two ranges run at once
	ctx   context.Context
	s     *rangeFileSink
	i, n  int
	off   int64 // where the next flush writes; -1 until known
	start int64
	buf   []byte
	state int // 0 open, 1 closed, 2 committed or aborted
	_     cacheLinePad
}

// cacheLinePad keeps the fields of a struct that one goroutine writes per
// record off the cache lines of its neighbours in memory.
type cacheLinePad [64]byte

// CopiesValues implements formats.ValueCopier: Write copies the lines into its
// buffer.
func (w *rangeWriter) CopiesValues() {}

func (w *rangeWriter) Write(batch []string) error {
	for _, l := range batch {
		if err := writeLine(w, l); err != nil {
			return err
		}
	}
	return nil
}

// WriteRaw implements formats.RawWriter: it writes one line given as its
// bytes (the sort's merge hands them over without a copy).
func (w *rangeWriter) WriteRaw(l []byte) error { return writeLine(w, l) }

// writeLine appends l and a newline to w's buffer, flushing it first when
// full (a line longer than the buffer gets a buffer of its own).
func writeLine[L string | []byte](w *rangeWriter, l L) error {
	if w.off < 0 {
		if err := w.locate(); err != nil {
			return err
		}
	}
	if len(w.buf)+len(l)+1 > cap(w.buf) {
		if err := w.flush(); err != nil {
			return err
		}
		if len(l)+1 > cap(w.buf) {
			w.buf = make([]byte, 0, len(l)+1)
		}
	}
	w.buf = append(w.buf, l...)
	w.buf = append(w.buf, '\n')
	return nil
}

// locate learns where the range starts; the first range to learn the output's
// size gives the file its length.
func (w *rangeWriter) locate() error {
	off, total, err := w.s.sizes.offset(w.ctx, w.i)
	if err != nil {
		return err
	}
	w.s.phase.Store(phaseMerge)
	w.off, w.start = off, off
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	if !w.s.sized && total > 0 && w.n > 1 {
		// Give the file its length before any range writes into it.
		if err := w.s.f.Truncate(total); err != nil {
			return fmt.Errorf("size output: %w", err)
		}
	}
	w.s.sized = true
	return nil
}

func (w *rangeWriter) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	if _, err := w.s.f.WriteAt(w.buf, w.off); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	w.off += int64(len(w.buf))
	w.s.written.Add(int64(len(w.buf)))
	w.buf = w.buf[:0]
	if sortHook != nil {
		sortHook("write")
	}
	return nil
}

func (w *rangeWriter) Close() error {
	if w.state != 0 {
		return fmt.Errorf("output %s: close after close, commit or abort", w.s.path)
	}
	if w.off < 0 {
		if err := w.locate(); err != nil {
			return err
		}
	}
	if err := w.flush(); err != nil {
		return err
	}
	w.state = 1
	if end, _, _ := w.s.sizes.offset(w.ctx, w.i+1); w.off != end {
		return fmt.Errorf("internal error: range %d ends at byte %d, counted %d", w.i, w.off, end)
	}
	return nil
}

func (w *rangeWriter) Commit() error {
	if w.state != 1 {
		return fmt.Errorf("output %s: commit without close", w.s.path)
	}
	w.state = 2
	return w.s.release(true)
}

func (w *rangeWriter) Abort() {
	if w.state == 2 {
		return
	}
	w.state = 2
	w.s.release(false)
}

// sampleBounds reads whole lines from chunks spread evenly over the file and
// returns the parts-1 lines that cut the sample into parts equal ranges, or nil
// when the sample has fewer than parts lines. Equal bounds (a skewed input)
// leave ranges empty.
func sampleBounds(f *os.File, size int64, parts int) ([]string, error) {
	const chunk, chunks, perChunk = 4 << 10, 256, 32
	var sample []string
	buf := make([]byte, chunk)
	n := int64(min(chunks, size/chunk+1))
	for i := range n {
		off := size * i / n
		m, err := f.ReadAt(buf, off)
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("sample input: %w", err)
		}
		b := buf[:m]
		if off > 0 { // skip the line the chunk starts inside
			k := bytes.IndexByte(b, '\n')
			if k < 0 {
				continue
			}
			b = b[k+1:]
		}
		for range perChunk {
			k := bytes.IndexByte(b, '\n')
			if k < 0 {
				break
			}
			sample = append(sample, string(b[:k]))
			b = b[k+1:]
		}
	}
	if len(sample) < parts {
		return nil, nil
	}
	slices.Sort(sample)
	bounds := make([]string, parts-1)
	for p := range bounds {
		bounds[p] = sample[len(sample)*(p+1)/parts]
	}
	return bounds, nil
}

// pow2Clamp returns the largest power of two ≤ n, clamped to [lo, hi] (powers of two).
func pow2Clamp(n int64, lo, hi int) int {
	p := lo
	for int64(p)*2 <= n && p < hi {
		p *= 2
	}
	return p
}
