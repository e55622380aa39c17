package sortjoin

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/spill"
)

// source is one sorted input of a k-way merge. next returns the next record, or
// io.EOF at the end; the slices stay valid until the next call of next on the same
// source, so the merge can hold one current record per input.
type source interface {
	next() (key, val []byte, err error)
}

// runSource reads a spilled run.
type runSource struct {
	r *spill.Reader
}

func (s *runSource) next() ([]byte, []byte, error) { return s.r.NextKV() }

// bufferSource reads a sorted sortBuffer from memory, fetchBatch records at a
// time (see sortBuffer.fetch).
type bufferSource struct {
	b      *sortBuffer
	i      int // next record to fetch
	ks, vs [fetchBatch][]byte
	j, n   int // next fetched record to return, records fetched
}

func (s *bufferSource) next() ([]byte, []byte, error) {
	if s.j == s.n {
		if s.i >= s.b.len() {
			return nil, nil, io.EOF
		}
		s.n = s.b.fetch(s.i, &s.ks, &s.vs)
		s.i += s.n
		s.j = 0
	}
	k, v := s.ks[s.j], s.vs[s.j]
	s.j++
	return k, v, nil
}

// leaf is one input's current record in a loserTree.
type leaf struct {
	prefix uint64
	key    []byte
	val    []byte
	eof    bool
	src    source
}

// loserTree merges k sorted sources (a tournament tree of losers, as in Knuth 5.4.1
// and Flink's MergeIterator): each record costs about log2(k) comparisons, most of
// them on the normalized-key prefix alone. The order among equal keys is
// unspecified.
//
// Nodes 1..k-1 hold the loser of the match played there; node 0 holds the overall
// winner. The children of node n are 2n and 2n+1, and leaf i sits at k+i, which
// works for any k. Contract: init, then next until it reports false; the slices
// next returns are valid until the following call. A loserTree is reused across
// merges (init resets it) and allocates nothing per record.
type loserTree struct {
	leaves []leaf
	tree   []int
	win    []int // scratch for init
	live   bool  // the winner's record was returned and must be advanced first
	err    error
}

// init starts a merge of srcs, reading the first record of each; an error reading
// source i is returned with i.
func (t *loserTree) init(srcs []source) (int, error) {
	k := len(srcs)
	t.live, t.err = false, nil
	if k == 0 {
		t.leaves = t.leaves[:0]
		return 0, nil
	}
	if cap(t.leaves) < k {
		t.leaves = make([]leaf, k)
		t.tree = make([]int, k)
		t.win = make([]int, 2*k)
	}
	t.leaves, t.tree, t.win = t.leaves[:k], t.tree[:k], t.win[:2*k]
	for i, s := range srcs {
		t.leaves[i] = leaf{src: s}
		if err := t.fill(i); err != nil {
			return i, err
		}
	}
	for i := 0; i < k; i++ {
		t.win[k+i] = i
	}
	for n := k - 1; n >= 1; n-- {
		a, b := t.win[2*n], t.win[2*n+1]
		if t.less(b, a) {
			a, b = b, a
		}
		t.win[n], t.tree[n] = a, b
	}
	if k == 1 {
		t.tree[0] = 0
	} else {
		t.tree[0] = t.win[1]
	}
	return 0, nil
}

// fill reads leaf i's next record.
func (t *loserTree) fill(i int) error {
	l := &t.leaves[i]
	k, v, err := l.src.next()
	if err != nil {
		l.key, l.val, l.eof = nil, nil, true
		if err == io.EOF {
			return nil
		}
		return err
	}
	l.prefix, l.key, l.val = memory.Prefix(k), k, v
	return nil
}

// less reports whether leaf i's record sorts before leaf j's; exhausted leaves
// sort last.
func (t *loserTree) less(i, j int) bool {
	a, b := &t.leaves[i], &t.leaves[j]
	if a.eof || b.eof {
		return !a.eof && b.eof
	}
	if a.prefix != b.prefix {
		return a.prefix < b.prefix
	}
	if len(a.key) >= 8 && len(b.key) >= 8 {
		return bytes.Compare(a.key[8:], b.key[8:]) < 0
	}
	return bytes.Compare(a.key, b.key) < 0
}

// next returns the smallest remaining record, or ok == false at the end or on an
// error, which is returned with the index of the failing source.
func (t *loserTree) next() (key, val []byte, ok bool, failed int, err error) {
	if t.err != nil || len(t.leaves) == 0 {
		return nil, nil, false, 0, t.err
	}
	w := t.tree[0]
	if t.live {
		if err := t.fill(w); err != nil {
			t.err = err
			return nil, nil, false, w, err
		}
		// replay w's path to the root
		k := len(t.leaves)
		for n := (w + k) >> 1; n > 0; n >>= 1 {
			if l := t.tree[n]; t.less(l, w) {
				t.tree[n], w = w, l
			}
		}
		t.tree[0] = w
	}
	l := &t.leaves[w]
	if l.eof {
		t.live = false
		return nil, nil, false, 0, nil
	}
	t.live = true
	return l.key, l.val, true, 0, nil
}

// reset drops the sources so that the tree keeps no reference to them.
func (t *loserTree) reset() {
	for i := range t.leaves {
		t.leaves[i] = leaf{}
	}
	t.leaves = t.leaves[:0]
	t.live, t.err = false, nil
}

// mergeIter is the Iterator a Sorter's Finish returns: a loser tree over the
// spilled runs and the last buffer kept in memory, after as many intermediate
// merges as the fan-in requires. It owns everything the sorter had.
//
//	runs r0 r1 ... rn ──(while more than the fan-in: merge the smallest into one)──┐
//	final: loserTree(readers of the remaining runs [+ the sorted last buffer]) ◄───┘
//
// Memory: res holds one spill reader per open run (spill.Options.ReaderMemory) and,
// during intermediate merges, one writer; mem keeps its own reservation. The fan-in
// is what SortOptions.Memory and the manager allow, between 2 and MaxFanIn.
type mergeIter struct {
	ctx   context.Context
	name  string
	opts  SortOptions
	spill spill.Options
	res   *memory.Reservation
	space *spill.Space // nil when nothing was spilled
	mem   *sortBuffer  // the sorted last buffer, or nil
	stats *SortStats

	readers []*spill.Reader // open readers of the current merge
	names   []string        // the name of each tree input, for errors
	rsrcs   []runSource
	bsrc    bufferSource
	srcs    []source
	tree    loserTree
	n       int // records merged, for the context check
	err     error
	closed  bool
}

// memInput names the in-memory buffer in errors.
const memInput = "in-memory buffer"

// held returns the bytes the merge holds.
func (m *mergeIter) held() int64 {
	n := m.res.Bytes()
	if m.mem != nil {
		n += m.mem.res.Bytes()
	}
	return n
}

// afford reports whether n more bytes fit within SortOptions.Memory and the
// manager's budget.
func (m *mergeIter) afford(n int64) bool {
	return m.held()+n <= m.opts.Memory && n <= m.res.Manager().Available()
}

// reserveReaders reserves memory for up to want readers, and even past the
// budget for at least min(want, the readers the manager's floor buys, and 2 at
// least), and returns how many it reserved.
func (m *mergeIter) reserveReaders(want int) int {
	r := m.spill.ReaderMemory()
	got := 0
	for got < want && m.afford(r) && m.res.Grow(r) == nil {
		got++
	}
	if least := min(want, max(2, int(m.res.Manager().Floor()/r))); got < least {
		m.res.Force(int64(least-got) * r)
		got = least
	}
	return got
}

// start plans the merge, runs the intermediate merges and opens the final one.
func (m *mergeIter) start(runs []spill.Handle) error {
	readerMem := m.spill.ReaderMemory()
	if m.mem != nil && len(runs) > 0 &&
		(len(runs)+1 > m.opts.MaxFanIn || !m.afford(int64(len(runs))*readerMem)) {
		// The last buffer and the runs do not fit in one merge: spill it too, which
		// frees its memory for readers.
		h, err := writeRun(m.space, m.name, m.mem, len(runs), nil)
		if err != nil {
			return err
		}
		runs = append(runs, h)
		m.stats.Runs++
		m.stats.SpilledBytes += h.Bytes
		m.mem.release()
		m.mem = nil
	}
	want := min(len(runs), m.opts.MaxFanIn)
	if m.mem != nil {
		want = min(len(runs), m.opts.MaxFanIn-1)
	}
	fanIn := m.reserveReaders(want)
	if len(runs) > fanIn {
		w := m.spill.WriterMemory()
		if m.res.Grow(w) != nil {
			m.res.Force(w)
		}
		for len(runs) > fanIn {
			// Merge the smallest runs, just enough of them that the following
			// merges are full.
			slices.SortStableFunc(runs, func(a, b spill.Handle) int { return cmp.Compare(a.Bytes, b.Bytes) })
			k := min(fanIn, len(runs)-fanIn+1)
			h, err := m.mergeRuns(runs[:k])
			if err != nil {
				return err
			}
			runs = append(runs[k:], h)
			m.stats.MergePasses++
			m.stats.SpilledBytes += h.Bytes
		}
		m.res.Shrink(w)
	}
	if extra := fanIn - len(runs); extra > 0 {
		m.res.Shrink(int64(extra) * readerMem)
	}
	if err := m.open(runs); err != nil {
		return err
	}
	m.stats.FanIn = len(m.srcs)
	return nil
}

// open opens readers on runs, adds the in-memory buffer if any, and starts the
// loser tree over them.
func (m *mergeIter) open(runs []spill.Handle) error {
	m.srcs, m.names = m.srcs[:0], m.names[:0]
	m.rsrcs = slices.Grow(m.rsrcs[:0], len(runs))[:len(runs)]
	for i, h := range runs {
		r, err := m.space.Open(h)
		if err != nil {
			return fmt.Errorf("sortjoin: %s: open run %s: %w", m.name, h.Name, err)
		}
		m.readers = append(m.readers, r)
		m.rsrcs[i] = runSource{r: r}
		m.srcs = append(m.srcs, &m.rsrcs[i])
		m.names = append(m.names, h.Name)
	}
	if m.mem != nil {
		m.bsrc = bufferSource{b: m.mem}
		m.srcs = append(m.srcs, &m.bsrc)
		m.names = append(m.names, memInput)
	}
	if i, err := m.tree.init(m.srcs); err != nil {
		return fmt.Errorf("sortjoin: %s: read %s: %w", m.name, m.names[i], err)
	}
	return nil
}

// closeReaders closes the open readers and returns the first error.
func (m *mergeIter) closeReaders() error {
	var first error
	for i, r := range m.readers {
		if err := r.Close(); err != nil && first == nil {
			first = fmt.Errorf("sortjoin: %s: close run: %w", m.name, err)
		}
		m.readers[i] = nil
	}
	m.readers = m.readers[:0]
	m.tree.reset()
	return first
}

// mergeRuns merges group into a new run and removes the group's files.
func (m *mergeIter) mergeRuns(group []spill.Handle) (spill.Handle, error) {
	if err := m.open(group); err != nil {
		return spill.Handle{}, err
	}
	h, err := m.copyTree()
	if cerr := m.closeReaders(); err == nil {
		err = cerr
	}
	if err != nil {
		return spill.Handle{}, err
	}
	for _, g := range group {
		if err := m.space.Remove(g); err != nil {
			return spill.Handle{}, fmt.Errorf("sortjoin: %s: remove run %s: %w", m.name, g.Name, err)
		}
	}
	return h, nil
}

// copyTree writes the loser tree's output to a new run.
func (m *mergeIter) copyTree() (spill.Handle, error) {
	w, err := m.space.Create()
	if err != nil {
		return spill.Handle{}, fmt.Errorf("sortjoin: %s: create merged run: %w", m.name, err)
	}
	for {
		k, v, ok, failed, err := m.tree.next()
		if err != nil {
			w.Abort()
			return spill.Handle{}, fmt.Errorf("sortjoin: %s: read run %s: %w", m.name, m.names[failed], err)
		}
		if !ok {
			break
		}
		if m.n++; m.n&ctxCheckMask == 0 {
			if err := m.ctx.Err(); err != nil {
				w.Abort()
				return spill.Handle{}, fmt.Errorf("sortjoin: %s: merge: %w", m.name, err)
			}
		}
		if err := w.AppendKV(k, v); err != nil {
			w.Abort()
			return spill.Handle{}, fmt.Errorf("sortjoin: %s: write merged run: %w", m.name, err)
		}
	}
	h, err := w.Finish()
	if err != nil {
		w.Abort()
		return spill.Handle{}, fmt.Errorf("sortjoin: %s: finish merged run: %w", m.name, err)
	}
	return h, nil
}

// Next implements Iterator.
func (m *mergeIter) Next() (key, val []byte, ok bool) {
	if m.err != nil || m.closed {
		return nil, nil, false
	}
	if m.n++; m.n&ctxCheckMask == 0 {
		if err := m.ctx.Err(); err != nil {
			m.err = fmt.Errorf("sortjoin: %s: merge: %w", m.name, err)
			return nil, nil, false
		}
	}
	k, v, ok, failed, err := m.tree.next()
	if err != nil {
		m.err = fmt.Errorf("sortjoin: %s: read %s: %w", m.name, m.names[failed], err)
		return nil, nil, false
	}
	return k, v, ok
}

// Err implements Iterator.
func (m *mergeIter) Err() error { return m.err }

// Close implements Iterator: it closes the readers, releases the memory and
// removes the spill files.
func (m *mergeIter) Close() error {
	if m.closed {
		return nil
	}
	m.closed = true
	err := m.closeReaders()
	if m.mem != nil {
		m.mem.release()
		m.mem = nil
	}
	if rerr := m.res.Release(); rerr != nil && !errors.Is(rerr, memory.ErrReleased) && err == nil {
		err = rerr
	}
	if m.space != nil {
		if serr := m.space.Close(); serr != nil && err == nil {
			err = fmt.Errorf("sortjoin: %s: remove spill files: %w", m.name, serr)
		}
		m.space = nil
	}
	return err
}
