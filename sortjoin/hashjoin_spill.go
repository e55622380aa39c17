package sortjoin

import (
	"errors"
	"fmt"
	"io"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/resource"
	"github.com/weirdata/weir/spill"
)

// joinSpill is the spill side of one join operator: a spill.Space on the Env's FS,
// created on first use, with the buffer memory of every open writer and reader
// accounted in the operator's reservation.
//
// Memory: an open writer holds Spill.WriterMemory() and an open reader
// Spill.ReaderMemory() bytes. They are taken with Grow and, when the budget is
// exhausted, with Force: a spilling operator needs its open files to make progress
// at all, and the operators bound how many they keep open (the hash join one per
// partition, the merge join one).
//
// Not safe for concurrent use; it belongs to its operator's goroutine.
type joinSpill struct {
	env   resource.Env
	owner string
	res   *memory.Reservation
	space *spill.Space
	wmem  int64
	rmem  int64
}

func newJoinSpill(env resource.Env, owner string, res *memory.Reservation) joinSpill {
	return joinSpill{
		env:   env,
		owner: owner,
		res:   res,
		wmem:  env.Spill.WriterMemory(),
		rmem:  env.Spill.ReaderMemory(),
	}
}

// reserve takes n bytes for a file buffer, past the budget if it must.
func (s *joinSpill) reserve(n int64) {
	if s.res.Grow(n) != nil {
		s.res.Force(n)
	}
}

// create starts a spill file.
func (s *joinSpill) create() (*spill.Writer, error) {
	if s.space == nil {
		if s.env.FS == nil {
			return nil, fmt.Errorf("sortjoin: %s: spilling needs an Env.FS", s.owner)
		}
		s.space = spill.NewSpace(s.env.FS, s.owner, s.env.Spill)
	}
	s.reserve(s.wmem)
	w, err := s.space.Create()
	if err != nil {
		s.res.Shrink(s.wmem)
		return nil, fmt.Errorf("sortjoin: %s: create spill file: %w", s.owner, err)
	}
	return w, nil
}

// finish completes w and returns its handle. On error the file is already
// removed (spill.Writer.Finish aborts it).
func (s *joinSpill) finish(w *spill.Writer) (spill.Handle, error) {
	h, err := w.Finish()
	s.res.Shrink(s.wmem)
	if err != nil {
		return spill.Handle{}, fmt.Errorf("sortjoin: %s: finish spill file: %w", s.owner, err)
	}
	return h, nil
}

// abort discards an unfinished file; w may be nil.
func (s *joinSpill) abort(w *spill.Writer) {
	if w == nil {
		return
	}
	w.Abort()
	s.res.Shrink(s.wmem)
}

// open opens a finished file for reading.
func (s *joinSpill) open(h spill.Handle) (*spill.Reader, error) {
	s.reserve(s.rmem)
	r, err := s.space.Open(h)
	if err != nil {
		s.res.Shrink(s.rmem)
		return nil, fmt.Errorf("sortjoin: %s: open spill file %s: %w", s.owner, h.Name, err)
	}
	return r, nil
}

// closeReader closes r; r may be nil.
func (s *joinSpill) closeReader(r *spill.Reader) error {
	if r == nil {
		return nil
	}
	err := r.Close()
	s.res.Shrink(s.rmem)
	if err != nil {
		return fmt.Errorf("sortjoin: %s: close spill file: %w", s.owner, err)
	}
	return nil
}

// remove deletes a finished file.
func (s *joinSpill) remove(h spill.Handle) error {
	if err := s.space.Remove(h); err != nil {
		return fmt.Errorf("sortjoin: %s: remove spill file %s: %w", s.owner, h.Name, err)
	}
	return nil
}

// bytesWritten returns the bytes written to spill files so far.
func (s *joinSpill) bytesWritten() int64 {
	if s.space == nil {
		return 0
	}
	return s.space.Stats().BytesWritten
}

// close removes every file left in the space.
func (s *joinSpill) close() error {
	if s.space == nil {
		return nil
	}
	sp := s.space
	s.space = nil
	if err := sp.Close(); err != nil {
		return fmt.Errorf("sortjoin: %s: close spill space: %w", s.owner, err)
	}
	return nil
}

// joinFileIter reads a finished spill file as an Iterator. It opens its reader at
// the first Next and closes it at the end of the file, so that its buffer memory is
// held only while it is read; Close closes it earlier. It does not remove the file.
type joinFileIter struct {
	s    *joinSpill
	h    spill.Handle
	r    *spill.Reader
	done bool
	err  error
}

// fileIter returns an Iterator over the records of h.
func (s *joinSpill) fileIter(h spill.Handle) *joinFileIter { return &joinFileIter{s: s, h: h} }

func (it *joinFileIter) Next() (key, val []byte, ok bool) {
	if it.done {
		return nil, nil, false
	}
	if it.r == nil {
		if it.r, it.err = it.s.open(it.h); it.err != nil {
			it.done = true
			return nil, nil, false
		}
	}
	k, v, err := it.r.NextKV()
	if err != nil {
		it.done = true
		if !errors.Is(err, io.EOF) {
			it.err = fmt.Errorf("sortjoin: %s: read spill file %s: %w", it.s.owner, it.h.Name, err)
		} else {
			it.err = it.Close()
		}
		return nil, nil, false
	}
	return k, v, true
}

func (it *joinFileIter) Err() error { return it.err }

func (it *joinFileIter) Close() error {
	r := it.r
	it.r, it.done = nil, true
	return it.s.closeReader(r)
}

// copyJoinKey copies src into dst's storage and returns it, accounting any growth of
// dst in res with Force: an operator's copies of the current keys are part of the
// fixed minimum it needs to make progress.
func copyJoinKey(res *memory.Reservation, dst, src []byte) []byte {
	if cap(dst) < len(src) {
		c := max(len(src), 2*cap(dst), 32)
		res.Force(int64(c - cap(dst)))
		dst = make([]byte, 0, c)
	}
	return append(dst[:0], src...)
}

// accountJoinScratch accounts the growth of a scratch slice (from capacity before)
// that memory.RecordBuffer.Get grew to copy a record larger than a segment.
func accountJoinScratch(res *memory.Reservation, before int, after []byte) {
	if d := cap(after) - before; d > 0 {
		res.Force(int64(d))
	}
}

// presentSide returns v, the value of a side that is present, as a non-nil slice, so
// that an empty value is not mistaken for a missing side.
func presentSide(v []byte) []byte {
	if v == nil {
		return emptySide
	}
	return v
}

var emptySide = []byte{}

// spillPart moves in-memory partition pi of lv to a new build spill file and frees
// its memory; the partition's later build records go straight to the file.
func (j *hashJoin) spillPart(lv *joinLevel, pi int) error {
	p := &lv.parts[pi]
	w, err := j.spill.create()
	if err != nil {
		return j.partErr("create build spill file", lv, pi, err)
	}
	p.bw, p.state = w, joinPartSpilled
	lv.spilled++
	j.stats.SpilledPartitions++
	for i := 0; i < p.n; i++ {
		vs := cap(j.vs)
		var k, v []byte
		k, v, j.vs = p.buf.Get(p.off(uint32(i)), j.vs)
		accountJoinScratch(j.res, vs, j.vs)
		if err := w.AppendKV(k, v); err != nil {
			return j.partErr("write build spill file", lv, pi, err)
		}
	}
	p.freeMemory(j.res)
	return nil
}

// joinSpilled joins spilled partition pi of lv: by a hash join one level down, or by
// sort-merge when the level limit is reached or the build side holds a single hash
// value (repartitioning cannot split it). Its files are removed on return.
func (j *hashJoin) joinSpilled(lv *joinLevel, pi int) error {
	if err := j.checkCtx(); err != nil {
		return err
	}
	p := &lv.parts[pi]
	switch {
	case !p.hasProbe:
		// No probe record hashes here: only unmatched build records can result.
		if j.buildOnly {
			if err := j.emitFile(lv, pi); err != nil {
				return err
			}
		}
	case lv.level >= j.maxLevel || (p.oneHash && p.records > 1):
		if err := j.sortMerge(lv, pi); err != nil {
			return err
		}
	default:
		if err := j.recurse(lv, pi); err != nil {
			return err
		}
	}
	return j.removePart(p)
}

// recurse joins the files of spilled partition pi at the next level.
func (j *hashJoin) recurse(lv *joinLevel, pi int) error {
	p := &lv.parts[pi]
	b, pr := j.spill.fileIter(p.bh), j.spill.fileIter(p.ph)
	err := j.joinLevel(lv.level+1, b, pr)
	return errors.Join(err, b.Close(), pr.Close())
}

// emitFile emits every record of partition pi's build file as unmatched.
func (j *hashJoin) emitFile(lv *joinLevel, pi int) error {
	it := j.spill.fileIter(lv.parts[pi].bh)
	var err error
	for {
		if j.tick++; j.tick%joinCtxEvery == 0 {
			if err = j.checkCtx(); err != nil {
				break
			}
		}
		k, v, ok := it.Next()
		if !ok {
			err = it.Err()
			break
		}
		if err = j.emitBuild(k, v); err != nil {
			break
		}
	}
	return errors.Join(err, it.Close())
}

// sortMerge joins spilled partition pi by sorting its two files and merging them.
func (j *hashJoin) sortMerge(lv *joinLevel, pi int) error {
	p := &lv.parts[pi]
	j.stats.SortMergeFallbacks++
	if p.oneHash && p.records > 1 {
		j.stats.SingleKeyFallbacks++
	}
	name := fmt.Sprintf("%s/L%d.p%d", j.opts.Name, lv.level, pi)
	b, err := j.sortFile(p.bh, name+"/sort-build")
	if err != nil {
		return j.partErr("sort build side", lv, pi, err)
	}
	pr, err := j.sortFile(p.ph, name+"/sort-probe")
	if err != nil {
		return errors.Join(j.partErr("sort probe side", lv, pi, err), b.Close())
	}
	left, right := b, pr
	if !j.buildLeft {
		left, right = pr, b
	}
	err = MergeJoin(j.ctx, j.env, name+"/merge", left, right, j.kind, j.emit)
	return errors.Join(err, b.Close(), pr.Close())
}

// sortFile returns the records of file h in key order. The sorter gets half the
// memory available when it starts, so that the build side's sorted iterator leaves
// room for the probe side's, and at least the manager's floor.
func (j *hashJoin) sortFile(h spill.Handle, name string) (Iterator, error) {
	share := int64(memory.Unlimited)
	if j.env.Memory.Budget() != memory.Unlimited {
		share = max(j.env.Memory.Available()/2, j.env.Memory.Floor(), 4*int64(j.segSize))
	}
	s := NewSorter(j.env, SortOptions{Name: name, Memory: share})
	defer s.Close()
	in := j.spill.fileIter(h)
	var err error
	for {
		if j.tick++; j.tick%joinCtxEvery == 0 {
			if err = j.checkCtx(); err != nil {
				break
			}
		}
		k, v, ok := in.Next()
		if !ok {
			err = in.Err()
			break
		}
		if err = s.Add(k, v); err != nil {
			break
		}
	}
	if err = errors.Join(err, in.Close()); err != nil {
		return nil, err
	}
	it, err := s.Finish(j.ctx)
	if err != nil {
		return nil, err
	}
	j.stats.BytesSpilled += s.Stats().SpilledBytes
	return it, nil
}

// removePart removes the finished files of a partition.
func (j *hashJoin) removePart(p *joinPart) error {
	var err error
	if p.hasBuild {
		p.hasBuild = false
		err = j.spill.remove(p.bh)
	}
	if p.hasProbe {
		p.hasProbe = false
		err = errors.Join(err, j.spill.remove(p.ph))
	}
	return err
}

// releaseLevel frees whatever the level still holds: memory, open writers and
// files. On success it finds nothing left.
func (j *hashJoin) releaseLevel(lv *joinLevel) error {
	var err error
	for i := range lv.parts {
		p := &lv.parts[i]
		j.spill.abort(p.bw)
		j.spill.abort(p.pw)
		p.bw, p.pw = nil, nil
		err = errors.Join(err, j.removePart(p))
		if p.state == joinPartMemory {
			p.freeMemory(j.res)
		}
	}
	return err
}
