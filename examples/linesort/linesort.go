package linesort

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"iter"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/formats/text"
)

// Job is one sort of a file's lines, a DataSet program (see the package
// documentation for its plan).
type Job struct {
	opts Options

	size    atomic.Int64 // the input's size in bytes
	read    atomic.Int64 // input bytes read
	written atomic.Int64 // output bytes written
	merging atomic.Bool  // the ranges are writing the output

	hook func(event string) // tests: "read" every 1024 lines read, "write" every buffer written
}

// Options configure one sort.
type Options struct {
	// Input is the file whose lines to sort; Output the file to write them to.
	Input, Output string
	// Dataset configures the program's Env: Memory is the budget, Parallelism
	// the number of key ranges sorted at once (0: runtime.GOMAXPROCS), TmpDir
	// the spill directory and Spill.Codec the spill files' compression. The
	// job sets the segment size and the spill block size from Memory.
	Dataset dataset.Options
}

// Summary is what a sort did.
type Summary struct {
	Lines, Bytes int64 // lines and bytes sorted
	Ranges       int   // key ranges sorted in parallel
	SpilledBytes int64 // bytes written to spill files
	PeakMemory   int64 // peak bytes reserved from the memory manager
}

// Progress is how far a running sort is.
type Progress struct {
	Size    int64 // the input's size in bytes (0 until the job opened it)
	Read    int64 // input bytes read
	Written int64 // output bytes written
	Merging bool  // the sorted ranges are being written
}

// New returns the job that sorts o.Input into o.Output.
func New(o Options) *Job { return &Job{opts: o} }

// Progress returns how far the job is; it may be called while Run runs.
func (j *Job) Progress() Progress {
	return Progress{Size: j.size.Load(), Read: j.read.Load(), Written: j.written.Load(), Merging: j.merging.Load()}
}

// Run sorts the input into the output, leaving nothing behind on error.
func (j *Job) Run(ctx context.Context) (Summary, error) {
	s, err := j.run(ctx)
	if err != nil {
		return Summary{}, fmt.Errorf("linesort: %w", err)
	}
	return s, nil
}

func (j *Job) run(ctx context.Context) (Summary, error) {
	in, err := os.Open(j.opts.Input)
	if err != nil {
		return Summary{}, err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return Summary{}, err
	}
	if st.IsDir() {
		return Summary{}, fmt.Errorf("input %s is a directory", j.opts.Input)
	}
	j.size.Store(st.Size())
	opts := j.opts.Dataset
	if err := checkDir(opts.TmpDir, "spill directory"); err != nil {
		return Summary{}, err
	}
	parallelism := opts.Parallelism
	if parallelism <= 0 {
		parallelism = runtime.GOMAXPROCS(0)
	}
	var bounds []string
	if parallelism > 1 && st.Mode().IsRegular() && st.Size() > 0 {
		if bounds, err = sampleBounds(in, st.Size(), parallelism); err != nil {
			return Summary{}, err
		}
	}
	parts := len(bounds) + 1
	memory := opts.Memory
	src, err := text.OpenWith(j.opts.Input, text.Options{ChunkSize: pow2Clamp(memory/64, 64<<10, 1<<20)})
	if err != nil {
		return Summary{}, err
	}
	opts.Parallelism = parts
	opts.SegmentSize = pow2Clamp(memory/256, 4<<10, 1<<20)
	opts.Spill.BlockSize = pow2Clamp(memory/1024, 4<<10, 256<<10)
	env := dataset.New(opts)
	sizes := newRangeSizes(parts)
	lines := dataset.FromSource(env, "input", src)
	if parts > 1 {
		lines = dataset.PartitionByRangeBounds(lines, dataset.Self[string](), bounds)
	}
	lines = dataset.MapPartition(lines, func(in iter.Seq[string], emit func(string)) {
		j.countRange(bounds, sizes, in, emit)
	})
	sorted := dataset.SortPartition(lines, dataset.Self[string](), dataset.Ascending)
	sink := &rangeFileSink{job: j, path: j.opts.Output, sizes: sizes, bufSize: pow2Clamp(memory/32, 4<<10, 4<<20)}
	dataset.Output(sorted, "output", sink)

	res, err := env.Execute(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return Summary{}, fmt.Errorf("interrupted: %w", ctx.Err())
		}
		return Summary{}, err
	}
	return Summary{Lines: sizes.lines, Bytes: j.written.Load(), Ranges: parts,
		PeakMemory: res.Metrics.PeakMemory, SpilledBytes: res.Metrics.SpilledBytes()}, nil
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
func (j *Job) countRange(bounds []string, sizes *rangeSizes, in iter.Seq[string], emit func(string)) {
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
			if j.hook != nil {
				j.hook("read")
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
