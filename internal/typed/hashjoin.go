package typed

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"unsafe"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/sortjoin"
)

// joinChunk is how much memory a typed hash join reserves at a time.
const joinChunk = 1 << 20

// Build is the build side of a typed hash join, the hybrid hash join's fast
// path for a build side that
// fits in the operator's memory share: the build records are kept as Go
// values (their strings copied into the join's arena: memory.Codec.Own), with
// their encoded keys, in a chained hash table; probe records are
// looked up as they come, a batch at a time, without being serialized, and
// the join function gets pointers to both values. Nothing is decoded.
//
// It reserves its memory as it builds. When the build side outgrows the
// limit, or the budget runs out, it gives up:
// the records it holds and the rest of the build input are replayed, in their
// serialized form, into sortjoin.HashJoin, which partitions and spills. The
// typed records are dropped as they are replayed; the memory they take until
// then is released from the reservation before the hash join starts, so for
// that moment the operator may hold up to one share more than its budget.
//
//	building ──(outgrows its memory)──▶ replaying, serialized (sortjoin.HashJoin)
//	   │
//	indexed: dense array (Dense keys) or hash slots ──▶ probed
type Build[B any] struct {
	codec *memory.Codec[B]
	k     func(dst []byte, v *B) []byte // the keyer's appender
	vals  []B
	hash  []uint64
	keys  []byte
	koff  []int32 // keys[koff[i]:koff[i+1]] is record i's key
	// slots is the open-addressing table (linear probing): 0 for empty, else
	// the key's hash tag (its high 32 bits) and index+1 of the first record
	// with the key; next chains the other records with the same key.
	slots []uint64
	next  []int32 // index+1 of the next record with the same key, 0 at the end
	mask  uint64
	// filter rules out most probe keys that are not in the table before
	// its slots are read, in front of a table larger than the caches; nil
	// below that, or once it found that it rules out too few
	filter *keyFilter
	// dense replaces slots when every key is 8 bytes and the keys, read as
	// big-endian words, are dense (see Dense; entries of 4 bytes):
	// dense[u-base] is index+1 of the first record
	// with key u. A lookup is an index, and probes in key order (a Reduce's
	// output in an iteration, say) read it in order.
	dense []int32
	base  uint64
	ksize int // the keyer's fixed key size, or 0
	arena *memory.Arena
	// deep copies records whose codec is not Shallow through their serialized
	// form (memory.Codec.DecodeArena), so that they share nothing with the
	// input's; enc is its buffer.
	deep bool
	enc  []byte
	// unpaid: the arrays were presized (Input.Rows) and not yet accounted
	unpaid bool
	used   int64 // bytes taken
	res    *memory.Reservation
	limit  int64 // the share; 0: only the budget limits it
}

// errOverflow ends a typed build that outgrew its memory.
var errOverflow = errors.New("typed join build side outgrew its memory")

// Joinable reports whether a build side of type B can be held as Go values:
// its strings and byte slices can be owned (memory.Codec.Shallow).
func Joinable[B any](c *memory.Codec[B]) bool { return c.Shallow() }

// add appends a batch of build records, or returns errOverflow and the
// index of the record that did not fit (it is held, the ones after it not).
// Any other error (a failed deep copy) ends the join.
func (t *Build[B]) add(batch []B) (int, error) {
	// The arrays are accounted by capacity: doubling holds up to twice what
	// the records need.
	var zero B
	const per = 8 + 4 + 16 + filterBits/8*2 // hash, next, slots (2 × uint64), the key filter (up to twice its bits, rounded to a power of two), sized by the records at index time
	arrays := func() int64 {
		return int64(cap(t.vals))*int64(unsafe.Sizeof(zero)) + int64(cap(t.koff))*4 + int64(cap(t.keys))
	}
	before := arrays()
	if t.unpaid { // the presized arrays are accounted with the first records
		before, t.unpaid = 0, false
	}
	t.vals, t.koff = growDouble(t.vals, len(batch)), growDouble(t.koff, len(batch))
	t.keys = growDouble(t.keys, keyBytes(t.ksize, len(t.keys), len(t.vals))*len(batch))
	t.used += arrays() - before
	for i := range batch {
		before := cap(t.keys)
		t.keys = t.k(t.keys, &batch[i])
		size := per + int64(cap(t.keys)-before)
		t.vals = append(t.vals, batch[i])
		switch v := &t.vals[len(t.vals)-1]; {
		case t.codec.Flat():
		case t.codec.Shallow():
			size += int64(t.codec.Own(v, nil, t.arena))
		case t.deep:
			t.enc = t.codec.Append(t.enc[:0], v)
			if _, err := t.codec.DecodeArena(t.enc, v, t.arena); err != nil {
				t.vals = t.vals[:len(t.vals)-1]
				return i, fmt.Errorf("internal error: copy of a build record: %w", err)
			}
			size += int64(len(t.enc))
		}
		t.used += size
		if t.used > t.res.Bytes() {
			if t.limit > 0 && t.used > t.limit {
				return i, errOverflow
			}
			if err := t.res.Grow(max(joinChunk, t.used-t.res.Bytes())); err != nil {
				return i, errOverflow
			}
		}
		t.koff = append(t.koff, int32(len(t.keys)))
	}
	return len(batch), nil
}

// growDouble returns s with room for n more elements, doubling its capacity
// when it grows: append grows large slices by a quarter, which copies a
// build side of millions of records four times over, doubling once.
func growDouble[E any](s []E, n int) []E {
	if need := len(s) + n; need > cap(s) {
		g := make([]E, len(s), max(need, 2*cap(s)))
		copy(g, s)
		return g
	}
	return s
}

// joinSeed seeds a typed join's hashes (unlike the partitioner's, so
// that a partition's keys spread over the table).
const joinSeed = PartitionSeed ^ 0x6a09e667f3bcc908

// index builds the hash table, or the dense array, over the records added.
func (t *Build[B]) index() {
	n := len(t.vals)
	t.next = make([]int32, n)
	if t.indexDense() {
		return
	}
	// the hashes, only now: a dense index needs none
	t.hash = make([]uint64, n)
	for i := range n {
		t.hash[i] = memory.Hash(t.key(int32(i)), joinSeed)
	}
	size := uint64(1) << bits.Len64(uint64(max(2*n, 1))-1) // a power of two ≥ 2n
	t.slots = memory.MakeHuge[uint64](int(size))
	t.mask = size - 1
	t.filter = newKeyFilter(t.hash)
	for i := n - 1; i >= 0; i-- { // backwards, so chains list records in input order
		h := t.hash[i]
		tag := h >> 32
		for s := h & t.mask; ; s = (s + 1) & t.mask {
			e := t.slots[s]
			if e == 0 {
				t.slots[s] = tag<<32 | uint64(i+1)
				break
			}
			if j := int32(e) - 1; e>>32 == tag && t.hash[j] == h && bytes.Equal(t.key(j), t.key(int32(i))) {
				t.next[i] = j + 1 // i heads the key's chain now
				t.slots[s] = tag<<32 | uint64(i+1)
				break
			}
		}
	}
}

// indexDense indexes the records in the dense array when their keys allow
// it (see Build.dense), and reports whether it did. When keys repeat
// (the edges of a graph by source, say), it also sorts the records by key,
// stably, if the budget lends it the memory of a second copy for that moment:
// a key's records then lie next to each other, as in a CSR adjacency array,
// and a probe reads them in order instead of one cache miss each.
func (t *Build[B]) indexDense() bool {
	n := len(t.vals)
	if t.ksize != 8 || n == 0 {
		return false
	}
	lo, hi := uint64(math.MaxUint64), uint64(0)
	for i := range n {
		u := t.word(i)
		lo, hi = min(lo, u), max(hi, u)
	}
	if !Dense(hi-lo, n, DenseFloor(t.limit, 4)) {
		return false
	}
	// beyond 4 entries a record the array takes more than the slots the
	// records reserved
	if extra := 4*int64(hi-lo+1) - 16*int64(n); extra > 0 {
		if t.res.Grow(extra) != nil {
			return false
		}
	}
	t.dense, t.base = memory.MakeHuge[int32](int(hi-lo+1)), lo
	distinct := 0
	for i := n - 1; i >= 0; i-- { // backwards, so chains list records in input order
		off := t.word(i) - lo
		if t.dense[off] == 0 {
			distinct++
		}
		t.next[i] = t.dense[off]
		t.dense[off] = int32(i + 1)
	}
	if distinct < n {
		t.sortByKey()
	}
	return true
}

// sortByKey reorders the records of a dense index by key (a counting sort,
// stable), rewriting dense and next so that every chain runs over
// consecutive records; it keeps the input order when the budget cannot lend
// the memory of the copy.
func (t *Build[B]) sortByKey() {
	var zero B
	n := len(t.vals)
	extra := int64(n) * int64(unsafe.Sizeof(zero))
	if t.res.Grow(extra) != nil {
		return
	}
	defer t.res.Shrink(extra)
	pos := make([]int32, len(t.dense)) // records a key, then index+1 of its next place
	for i := range n {
		pos[t.word(i)-t.base]++
	}
	at := int32(0)
	for off, c := range pos {
		if c > 0 { // dense[off] becomes index+1 of the key's first record
			t.dense[off], pos[off] = at+1, at+1
			at += c
		}
	}
	vals := memory.MakeHuge[B](n) // written at random
	for i := range n {
		off := t.word(i) - t.base
		j := pos[off] - 1
		pos[off]++
		vals[j] = t.vals[i]
	}
	// the chains run while the key repeats: key base+off's records are now
	// [dense[off]-1, pos[off]-1), written in order
	for off, end := range pos {
		if end == 0 {
			continue
		}
		from, to := int(t.dense[off]-1), int(end-1)
		for j := from; j < to-1; j++ {
			t.next[j] = int32(j + 2)
		}
		t.next[to-1] = 0
	}
	clear(t.vals) // no references kept
	// a dense index finds records by the array: the encoded keys are not
	// read again, and their order would be the input's
	t.vals, t.keys, t.koff = vals, nil, nil
}

func (t *Build[B]) key(i int32) []byte { return t.keys[t.koff[i]:t.koff[i+1]] }

// word returns record i's key, of 8 bytes, as a big-endian word.
func (t *Build[B]) word(i int) uint64 { return binary.BigEndian.Uint64(t.keys[8*i:]) }

// lookupDense returns index+1 of the first record with key word u, 0 if none.
func (t *Build[B]) lookupDense(u uint64) int32 {
	if off := u - t.base; off < uint64(len(t.dense)) {
		return t.dense[off]
	}
	return 0
}

// lookup returns index+1 of the first record with key k (hash h), 0 if none.
func (t *Build[B]) lookup(h uint64, k []byte) int32 {
	if f := t.filter; f != nil {
		if !f.mayHold(h) {
			return 0
		}
		if f.off {
			t.filter = nil
		}
	}
	tag := h >> 32
	for s := h & t.mask; ; s = (s + 1) & t.mask {
		e := t.slots[s]
		if e == 0 {
			return 0
		}
		if e>>32 == tag {
			if j := int32(e) - 1; bytes.Equal(t.key(j), k) { // tags differ for most others
				return j + 1
			}
		}
	}
}

// Probe joins the probe records of type P with a built table of B.
type Probe[B, P, O any] struct {
	build   *Build[B]
	k       func(dst []byte, v *P) []byte // the keyer's appender
	word    func(v *P) uint64             // the keyer's word, or nil
	pair    func(b *B, p *P) O            // the user's function, sides put back in place
	kind    Kind
	matched []bool // per build record, for the kinds that need it
	key     []byte
	out     []O
	next    func([]O) error
	batch   int
}

// Kind says what a typed join emits, relative to its build and probe
// sides.
type Kind struct {
	pairs          bool // matched pairs
	probeUnmatched bool // probe records without a match: pair(nil, p)
	buildUnmatched bool // build records without a match, at the end: pair(b, nil)
	probeSemi      bool // probe records with a match, once: pair(nil, p)
	buildSemi      bool // build records with a match, once: pair(b, nil)
}

// KindOf maps a join kind to what a typed join emits when the left
// input is the build side (buildLeft) or the right one.
func KindOf(kind sortjoin.JoinKind, buildLeft bool) Kind {
	switch kind {
	case sortjoin.Inner:
		return Kind{pairs: true}
	case sortjoin.LeftOuter:
		return Kind{pairs: true, buildUnmatched: buildLeft, probeUnmatched: !buildLeft}
	case sortjoin.RightOuter:
		return Kind{pairs: true, buildUnmatched: !buildLeft, probeUnmatched: buildLeft}
	case sortjoin.FullOuter:
		return Kind{pairs: true, buildUnmatched: true, probeUnmatched: true}
	case sortjoin.Semi:
		return Kind{buildSemi: buildLeft, probeSemi: !buildLeft}
	default: // Anti
		return Kind{buildUnmatched: buildLeft, probeUnmatched: !buildLeft}
	}
}

func (p *Probe[B, P, O]) emit(o O) error {
	p.out = append(p.out, o)
	if len(p.out) >= p.batch {
		return p.flush()
	}
	return nil
}

func (p *Probe[B, P, O]) flush() error {
	if len(p.out) == 0 {
		return nil
	}
	err := p.next(p.out)
	clear(p.out)
	p.out = p.out[:0]
	return err
}

// probe joins one batch of probe records.
func (p *Probe[B, P, O]) probe(batch []P) error {
	t := p.build
	for i := range batch {
		pr := &batch[i]
		var first int32
		switch {
		case t.dense == nil:
			p.key = p.k(p.key[:0], pr)
			first = t.lookup(memory.Hash(p.key, joinSeed), p.key)
		case p.word != nil:
			first = t.lookupDense(p.word(pr))
		default:
			if p.key = p.k(p.key[:0], pr); len(p.key) == 8 { // else no build key equals it
				first = t.lookupDense(binary.BigEndian.Uint64(p.key))
			}
		}
		found := first != 0
		for e := first; e != 0; e = t.next[e-1] {
			j := e - 1
			if p.matched != nil {
				if p.kind.buildSemi && !p.matched[j] {
					if err := p.emit(p.pair(&t.vals[j], nil)); err != nil {
						return err
					}
				}
				p.matched[j] = true
			}
			if p.kind.pairs {
				if err := p.emit(p.pair(&t.vals[j], pr)); err != nil {
					return err
				}
			} else if !p.kind.buildSemi && !p.kind.buildUnmatched {
				break // a probe-side semi or anti join needs one match
			}
		}
		switch {
		case found && p.kind.probeSemi, !found && p.kind.probeUnmatched:
			if err := p.emit(p.pair(nil, pr)); err != nil {
				return err
			}
		}
	}
	return nil
}

// finish emits the build records the kind keeps unmatched.
func (p *Probe[B, P, O]) finish() error {
	if p.kind.buildUnmatched {
		for j := range p.build.vals {
			if !p.matched[j] {
				if err := p.emit(p.pair(&p.build.vals[j], nil)); err != nil {
					return err
				}
			}
		}
	}
	return p.flush()
}

// Batches is a task's input of T: Next returns its batches, each valid until
// the next call, and io.EOF at the end. A flow.Reader is one.
type Batches[T any] interface {
	Next(ctx context.Context) ([]T, error)
}

// Input reads Batches of T as a sortjoin.Iterator of (key, serialized record)
// pairs, for the serialized kernels; the typed ones read In directly.
type Input[T any] struct {
	In    Batches[T]
	K     *Keyer[T]
	Codec *memory.Codec[T]
	// Rows, when positive, is the records expected (the planner's
	// estimate): a build side over the input sizes its arrays for them at
	// once instead of doubling them up to their size
	Rows     int
	ctx      context.Context
	batch    []T
	i        int
	key, val []byte
	err      error
	done     bool
}

// NewInput returns the input of in, keyed by k, read under ctx.
func NewInput[T any](ctx context.Context, in Batches[T], k *Keyer[T], codec *memory.Codec[T]) *Input[T] {
	return &Input[T]{ctx: ctx, In: in, K: k, Codec: codec}
}

func (it *Input[T]) Next() ([]byte, []byte, bool) {
	for it.i >= len(it.batch) {
		if it.done {
			return nil, nil, false
		}
		b, err := it.In.Next(it.ctx)
		if err != nil {
			it.done = true
			if !errors.Is(err, io.EOF) {
				it.err = err
			}
			return nil, nil, false
		}
		it.batch, it.i = b, 0
	}
	v := &it.batch[it.i]
	it.i++
	it.key = it.K.Append(it.key[:0], v)
	it.val = it.Codec.Append(it.val[:0], v)
	return it.key, it.val, true
}

func (it *Input[T]) Err() error   { return it.err }
func (it *Input[T]) Close() error { it.done = true; return nil }

// Outcome says how a typed hash join ran.
type Outcome uint8

// The outcomes of a typed hash join.
const (
	// IndexedHash: the build side was indexed by hash slots.
	IndexedHash Outcome = iota
	// IndexedDense: the build side was indexed by an array of its key words.
	IndexedDense
	// Overflowed: the build side outgrew its memory and the serialized
	// hybrid hash join ran.
	Overflowed
)

// HashJoin runs a hash join with build input bi (of B) and probe input pi
// (of P) on Go values, emitting pair's results to sink batch at a time. Its
// memory is reserved on res (released when it returns) up to limit. When the
// build side does not fit, it calls fallback with an iterator that replays
// the build side serialized: fallback runs the serialized hybrid hash join
// over it and pi.
func HashJoin[B, P, O any](ctx context.Context, res *memory.Reservation, limit int64, bi *Input[B], pi *Input[P], kind Kind,
	pair func(b *B, p *P) O, sink func([]O) error, batch int,
	fallback func(build sortjoin.Iterator) error) (Outcome, error) {
	t := NewBuild(bi, res, limit, false)
	defer func() { _ = res.Release() }()
	replay, err := t.Run(ctx, bi)
	if err != nil {
		return IndexedHash, err
	}
	if replay != nil {
		return Overflowed, fallback(replay)
	}
	out := IndexedHash
	if t.dense != nil {
		out = IndexedDense
	}
	return out, ProbeAll(ctx, t, pi, kind, pair, sink, batch)
}

// NewBuild returns an empty build side for records read from in, its memory
// reserved on res up to limit (0: no limit but the budget's). deep copies
// records whose codec is not Shallow through their serialized form.
func NewBuild[B any](in *Input[B], res *memory.Reservation, limit int64, deep bool) *Build[B] {
	t := &Build[B]{codec: in.Codec, k: in.K.Appender(), ksize: in.K.Size, koff: make([]int32, 1), arena: memory.NewArena(0),
		res: res, limit: limit, deep: deep}
	if n := presize[B](in.Rows, in.K.Size, limit); n > 0 {
		t.vals, t.koff = make([]B, 0, n), make([]int32, 1, n+1)
		t.keys = make([]byte, 0, n*keyBytes(t.ksize, 0, 0))
		t.unpaid = true
	}
	return t
}

// keyBytes is the bytes to expect a key to take: the keyer's fixed size,
// else the mean of the n keys held in held bytes (plus one), else 16.
func keyBytes(ksize, held, n int) int {
	switch {
	case ksize > 0:
		return ksize
	case n > 0:
		return held/n + 1
	}
	return 16
}

// maxPresize bounds the bytes a build side's arrays take up front.
const maxPresize = 256 << 20

// presize returns the records to size a build side's arrays for, given the
// rows expected: none when unknown or tiny; at most a quarter of limit (a
// wrong estimate must not push the join over its share) and maxPresize.
func presize[B any](rows, ksize int, limit int64) int {
	if rows < 1024 {
		return 0
	}
	var zero B
	per := int64(unsafe.Sizeof(zero)) + 4 + int64(keyBytes(ksize, 0, 0))
	most := int64(maxPresize)
	if limit > 0 {
		most = min(most, limit/4)
	}
	return int(min(int64(rows), most/max(per, 1)))
}

// Dense reports whether the build side is indexed by the dense array.
func (t *Build[B]) Dense() bool { return t.dense != nil }

// Run reads every batch of in into t and indexes it. When the records
// outgrow t's memory, it releases that memory and returns an iterator that
// replays, serialized, the records held and then the rest of the input; on
// an error it releases it too.
func (t *Build[B]) Run(ctx context.Context, in *Input[B]) (sortjoin.Iterator, error) {
	for {
		b, err := in.In.Next(ctx)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				_ = t.res.Release()
				return nil, err
			}
			break
		}
		if i, err := t.add(b); err != nil {
			_ = t.res.Release()
			if !errors.Is(err, errOverflow) {
				return nil, err
			}
			held, rest := t.vals, b[i+1:]
			t.vals, t.keys, t.hash, t.koff = nil, nil, nil, nil
			return &replayIter[B]{held: held, rest: rest, k: in.K, codec: in.Codec, in: in}, nil
		}
	}
	t.index()
	return nil, nil
}

// ProbeAll joins every batch of in with the built side t, then emits the
// build records kind keeps unmatched, sending pair's results to sink batch at
// a time.
func ProbeAll[B, P, O any](ctx context.Context, t *Build[B], in *Input[P], kind Kind,
	pair func(b *B, p *P) O, sink func([]O) error, batch int) error {
	pr := &Probe[B, P, O]{build: t, k: in.K.Appender(), word: in.K.Word, pair: pair, kind: kind, next: sink, batch: batch}
	if kind.buildSemi || kind.buildUnmatched {
		pr.matched = make([]bool, len(t.vals))
	}
	for {
		b, err := in.In.Next(ctx)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				return err
			}
			break
		}
		if err := pr.probe(b); err != nil {
			return err
		}
	}
	return pr.finish()
}

// replayIter serializes the records a typed build held (held, then the rest
// of the batch it stopped in), then continues with the input.
type replayIter[T any] struct {
	held, rest []T
	k          *Keyer[T]
	codec      *memory.Codec[T]
	in         *Input[T]
	key, val   []byte
}

func (r *replayIter[T]) Next() ([]byte, []byte, bool) {
	var v *T
	switch {
	case len(r.held) > 0:
		v = &r.held[0]
		r.held = r.held[1:]
	case len(r.rest) > 0:
		v = &r.rest[0]
		r.rest = r.rest[1:]
	default:
		return r.in.Next()
	}
	r.key = r.k.Append(r.key[:0], v)
	r.val = r.codec.Append(r.val[:0], v)
	return r.key, r.val, true
}

func (r *replayIter[T]) Err() error   { return r.in.Err() }
func (r *replayIter[T]) Close() error { return r.in.Close() }
