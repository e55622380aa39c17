package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/sortjoin"
	"github.com/weirdata/weir/spill"
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

func parseCodec(s string) (spill.Codec, error) {
	switch s {
	case "none":
		return spill.None, nil
	case "s2":
		return spill.S2, nil
	case "zstd":
		return spill.Zstd, nil
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

// sortJob is one run of `weir sort`.
//
//	input ──read 4 MiB chunks, split lines──► partition by sampled key ranges
//	      ──► Sorter per range (Async: sorts and spills in the background)
//	      ──► Finish each range in parallel ──► WriteAt its offset of the
//	          temporary output ──► rename to the output
//
// Memory (--memory, one memory.Manager): the input buffer and one output buffer
// per range (each budget/32, between 4 KiB and 4 MiB) are reserved first; the rest
// is split evenly between the ranges' sorters.
type sortJob struct {
	input, output, tmp string
	memory             int64
	parallelism        int
	codec              spill.Codec
	progress           io.Writer // nil: no progress lines

	read    atomic.Int64 // input bytes read
	written atomic.Int64 // output bytes written
	phase   atomic.Int32

	summary sortSummary // what the job did, filled in by a successful run
}

// sortSummary is what a `weir sort` run did.
type sortSummary struct {
	Lines, Bytes int64 // lines and bytes sorted
	Ranges       int   // key ranges sorted in parallel
	Runs         int   // sorted runs spilled, over all ranges
	MergePasses  int   // merge passes, over all ranges
	SpilledBytes int64 // bytes written to spill files
	PeakMemory   int64 // peak bytes reserved from the memory manager
}

// Phases shown in progress lines.
const (
	phaseRead int32 = iota
	phaseMerge
)

// layout is how a job splits its budget.
type layout struct {
	segment int   // memory segment size
	block   int   // spill block size
	ioBuf   int   // input buffer and each output buffer
	sorter  int64 // SortOptions.Memory of each range's sorter
}

// pow2Clamp returns the largest power of two ≤ n, clamped to [lo, hi] (powers of two).
func pow2Clamp(n int64, lo, hi int) int {
	p := lo
	for int64(p)*2 <= n && p < hi {
		p *= 2
	}
	return p
}

func planLayout(budget int64, parts int) layout {
	l := layout{
		segment: pow2Clamp(budget/256, 4<<10, 1<<20),
		block:   pow2Clamp(budget/1024, 4<<10, 256<<10),
		ioBuf:   pow2Clamp(budget/32, 4<<10, 4<<20),
	}
	l.sorter = max(budget-int64(parts+1)*int64(l.ioBuf), 1) / int64(parts)
	return l
}

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

	out, err := os.CreateTemp(filepath.Dir(j.output), "."+filepath.Base(j.output)+".weir-*")
	if err != nil {
		return fmt.Errorf("create output: %w", err)
	}
	committed := false
	defer func() {
		if !committed {
			out.Close()
			os.Remove(out.Name())
		}
	}()

	tmp := j.tmp
	if tmp == "" {
		tmp = os.TempDir()
	}
	disk, err := spill.NewDiskFS(tmp)
	if err != nil {
		return fmt.Errorf("spill directory: %w", err)
	}
	defer func() {
		if cerr := disk.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("remove spill directory: %w", cerr)
		}
	}()

	prevLimit := debug.SetMemoryLimit(j.memory + runtimeOverhead)
	defer debug.SetMemoryLimit(prevLimit)

	var splitters [][]byte
	if j.parallelism > 1 && st.Mode().IsRegular() && st.Size() > 0 {
		if splitters, err = sampleSplitters(in, st.Size(), j.parallelism); err != nil {
			return err
		}
	}
	parts := len(splitters) + 1
	lay := planLayout(j.memory, parts)
	mgr, err := memory.NewManager(memory.Options{SegmentSize: lay.segment, Budget: j.memory})
	if err != nil {
		return err
	}
	defer func() {
		if cerr := mgr.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	env := sortjoin.Env{Memory: mgr, FS: disk, Spill: spill.Options{Codec: j.codec, BlockSize: lay.block}}
	ioRes := mgr.NewReservation("sort/io")
	defer ioRes.Release()
	ioBytes := int64(parts+1) * int64(lay.ioBuf)
	if ioRes.Grow(ioBytes) != nil {
		ioRes.Force(ioBytes)
	}

	sorters := make([]*sortjoin.Sorter, parts)
	for p := range sorters {
		sorters[p] = sortjoin.NewSorter(env, sortjoin.SortOptions{
			Name:   fmt.Sprintf("sort-%d", p),
			Async:  true,
			Memory: lay.sorter,
		})
		defer sorters[p].Close()
	}

	stop := j.startProgress(st.Size())
	defer stop()

	sizes := make([]int64, parts)
	if err := j.readLines(ctx, in, make([]byte, lay.ioBuf), ioRes, func(line []byte) error {
		p := partition(splitters, line)
		sizes[p] += int64(len(line)) + 1
		return sorters[p].Add(line, nil)
	}); err != nil {
		return err
	}

	j.phase.Store(phaseMerge)
	var total int64
	for _, n := range sizes {
		total += n
	}
	if err := out.Truncate(total); err != nil { // allocate the length the ranges write into
		return fmt.Errorf("size output: %w", err)
	}
	errs := make([]error, parts)
	var wg sync.WaitGroup
	var base int64
	for p := range parts {
		wg.Add(1)
		go func(off int64) {
			defer wg.Done()
			errs[p] = j.writeRange(ctx, sorters[p], out, off, sizes[p], make([]byte, 0, lay.ioBuf))
		}(base)
		base += sizes[p]
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("interrupted: %w", err)
	}
	j.summary = sortSummary{Bytes: total, Ranges: parts, PeakMemory: mgr.Peak()}
	for _, s := range sorters {
		st := s.Stats()
		j.summary.Lines += st.Records
		j.summary.Runs += st.Runs
		j.summary.MergePasses += st.MergePasses
		j.summary.SpilledBytes += st.SpilledBytes
	}

	mode := os.FileMode(0o644)
	if fi, err := os.Stat(j.output); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := out.Chmod(mode); err != nil {
		return fmt.Errorf("output: %w", err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("close output: %w", err)
	}
	if err := os.Rename(out.Name(), j.output); err != nil {
		return fmt.Errorf("output: %w", err)
	}
	committed = true
	return nil
}

// readLines calls add for every line of in, without its '\n'; a last line without
// '\n' counts too. buf is the read buffer; it grows (forced on res) to hold a line
// longer than itself. ctx is checked once per read.
func (j *sortJob) readLines(ctx context.Context, in io.Reader, buf []byte, res *memory.Reservation, add func([]byte) error) error {
	carry := 0 // bytes of an unfinished line at the front of buf
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("interrupted: %w", err)
		}
		n, rerr := in.Read(buf[carry:])
		j.read.Add(int64(n))
		data := buf[:carry+n]
		start := 0
		for {
			i := bytes.IndexByte(data[start:], '\n')
			if i < 0 {
				break
			}
			if err := add(data[start : start+i]); err != nil {
				return err
			}
			start += i + 1
		}
		carry = copy(buf, data[start:])
		if rerr == io.EOF {
			if carry > 0 {
				return add(buf[:carry])
			}
			return nil
		}
		if rerr != nil {
			return fmt.Errorf("read input %s: %w", j.input, rerr)
		}
		if carry == len(buf) { // a line longer than the buffer
			res.Force(int64(len(buf)))
			buf = append(buf, make([]byte, len(buf))...)
		}
	}
}

// writeRange finishes one range's sorter and writes its lines at off in out,
// through buf; the range must come to size bytes.
func (j *sortJob) writeRange(ctx context.Context, s *sortjoin.Sorter, out *os.File, off, size int64, buf []byte) error {
	it, err := s.Finish(ctx)
	if err != nil {
		return err
	}
	defer it.Close()
	start := off
	flush := func(b []byte) error {
		if _, err := out.WriteAt(b, off); err != nil {
			return fmt.Errorf("write output: %w", err)
		}
		off += int64(len(b))
		j.written.Add(int64(len(b)))
		return nil
	}
	for {
		k, _, ok := it.Next()
		if !ok {
			break
		}
		if len(buf)+len(k)+1 > cap(buf) {
			if err := flush(buf); err != nil {
				return err
			}
			buf = buf[:0]
			if len(k)+1 > cap(buf) { // a line longer than the buffer goes out directly
				if err := flush(k); err != nil {
					return err
				}
				if err := flush([]byte{'\n'}); err != nil {
					return err
				}
				continue
			}
		}
		buf = append(buf, k...)
		buf = append(buf, '\n')
	}
	if err := it.Err(); err != nil {
		return err
	}
	if err := flush(buf); err != nil {
		return err
	}
	if off-start != size {
		return fmt.Errorf("internal error: a range wrote %d bytes, expected %d", off-start, size)
	}
	return it.Close()
}

// partition returns the range of line: the number of splitters ≤ line.
func partition(splitters [][]byte, line []byte) int {
	lo, hi := 0, len(splitters)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if bytes.Compare(line, splitters[mid]) < 0 {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// sampleSplitters reads whole lines from chunks spread evenly over the file and
// returns up to parts-1 distinct keys that cut the sample into parts equal ranges
// (fewer when the sample has fewer distinct lines, as with skewed inputs).
func sampleSplitters(f *os.File, size int64, parts int) ([][]byte, error) {
	const chunk, chunks, perChunk = 4 << 10, 256, 32
	var sample [][]byte
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
			sample = append(sample, slices.Clone(b[:k]))
			b = b[k+1:]
		}
	}
	if len(sample) < parts {
		return nil, nil
	}
	slices.SortFunc(sample, bytes.Compare)
	var splitters [][]byte
	for p := 1; p < parts; p++ {
		s := sample[len(sample)*p/parts]
		if len(splitters) == 0 || !bytes.Equal(splitters[len(splitters)-1], s) {
			splitters = append(splitters, s)
		}
	}
	if len(splitters) > 0 && bytes.Equal(splitters[0], sample[0]) {
		splitters = splitters[1:] // a range below the smallest sampled line would be empty
	}
	return splitters, nil
}
