package sortjoin

import (
	"context"
	"errors"
	"fmt"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/resource"
)

const (
	// DefaultJoinPartitions is the most partitions per level HashJoin chooses by
	// itself (HashJoinOptions.Partitions zero); it takes fewer under a small budget.
	DefaultJoinPartitions = 32
	// DefaultJoinMaxRecursion is HashJoinOptions.MaxRecursion when it is zero
	// (Flink's value).
	DefaultJoinMaxRecursion = 3
	// maxJoinPartitions bounds HashJoinOptions.Partitions: every spilled partition
	// keeps a spill writer open.
	maxJoinPartitions = 1024
)

// HashJoinOptions configures HashJoin.
type HashJoinOptions struct {
	// Name names the operator in reservations, spill files and errors ("hashjoin"
	// if empty).
	Name string
	// Build is the input read into the hash table (chosen by the caller, normally
	// the smaller one); the other input is probed against it.
	Build Side
	// MaxRecursion is the number of times a spilled partition pair is repartitioned
	// with a new seed before it is joined by sort-merge instead. Zero means
	// DefaultJoinMaxRecursion; a negative value means never: every spilled pair is
	// joined by sort-merge.
	MaxRecursion int
	// Partitions is the fan-out per level, rounded up to a power of two in [2, 1024].
	// Zero means DefaultJoinPartitions, or fewer when the memory available at the
	// start cannot hold two segments and one spill writer per partition.
	Partitions int
	// Seed seeds the hash of level 0; level L hashes with Seed+L.
	Seed uint64
}

// EnsureDefaults fills zero fields other than Partitions (which depends on the
// memory available, see HashJoin) and returns o.
func (o HashJoinOptions) EnsureDefaults() HashJoinOptions {
	if o.Name == "" {
		o.Name = "hashjoin"
	}
	if o.MaxRecursion == 0 {
		o.MaxRecursion = DefaultJoinMaxRecursion
	}
	if o.Partitions > 0 {
		p := 2
		for p < o.Partitions && p < maxJoinPartitions {
			p <<= 1
		}
		o.Partitions = p
	}
	return o
}

// JoinStats counts what a HashJoin did.
type JoinStats struct {
	Partitions         int   // fan-out per level
	BuildRecords       int64 // records read from the build input
	ProbeRecords       int64 // records read from the probe input
	SpilledPartitions  int   // build partitions written to disk, all levels together
	MaxLevel           int   // deepest level joined (0: no partition was repartitioned)
	SortMergeFallbacks int   // spilled partition pairs joined by sort-merge
	SingleKeyFallbacks int   // of those, pairs whose build side held a single hash value
	BytesSpilled       int64 // bytes written to spill files (partitions and fallback sorts), before compression
}

// HashJoin joins left and right by key with a hybrid hash join and calls emit for
// each result of kind; emit always receives (key, left, right) in the caller's
// order, whichever side is built. It consumes but does not close left and right, and
// returns the first error of an input, of emit, of the context or of a spill file.
// It never fails for size.
//
//	build ─► hash ─► partition p ─┬─ in memory: RecordBuffer + offsets ─► table ─┐
//	                              └─ spilled (largest, when the budget is hit):  │
//	                                 build file p                                │
//	probe ─► hash ─► partition p ─┬─ in memory: probe table, emit ◄──────────────┘
//	                              └─ spilled: probe file p
//	then each spilled pair (build file p, probe file p):
//	    level < MaxRecursion and > 1 hash value: HashJoin of the pair, seed+level+1
//	    otherwise: sort both files (Sorter), MergeJoin
//
// Each level goes through the states build → probe → finish (emit unmatched build
// records, free memory) → recurse into its spilled pairs, one at a time.
//
// The probe side is joined a batch of up to 128 records at a time (copied into one
// segment), so that the cache misses of their table look-ups overlap.
//
// Memory (one reservation named opts.Name): the partitions' records, offsets and
// hash tables, taken with Grow; when it fails, the largest in-memory partition is
// spilled and its memory returned. Up to the manager's floor Grow succeeds past
// the budget (memory.Reservation.SetFloor), so that partitions are not spilled a
// few records at a time while other operators hold the budget. The fixed minimum, taken past the budget if need
// be: the probe batch's segment, spill writer and reader buffers (see joinSpill: at
// most one writer per partition of the level; per level of recursion, one reader
// on the build file while building, then one on the probe file while probing), and
// one record larger than a segment. Every byte is released and every spill file
// removed before HashJoin returns, on every path.
//
// Outer, semi and anti joins hold in every branch: unmatched probe records are
// emitted while probing, unmatched build records (a matched bit per key in the
// table) when a partition finishes, and a spilled pair carries both sides of its
// keys to the next level. Semi and Anti are about the left input whichever side is
// built. The context is checked every 1024 records and once per partition.
func HashJoin(ctx context.Context, env resource.Env, opts HashJoinOptions, left, right Iterator, kind JoinKind, emit EmitFunc) (JoinStats, error) {
	opts = opts.EnsureDefaults()
	if env.Memory == nil {
		return JoinStats{}, fmt.Errorf("sortjoin: %s: Env.Memory is nil", opts.Name)
	}
	if kind > Anti {
		return JoinStats{}, fmt.Errorf("sortjoin: %s: unknown join kind %v", opts.Name, kind)
	}
	if opts.Build != Left && opts.Build != Right {
		return JoinStats{}, fmt.Errorf("sortjoin: %s: unknown build side %v", opts.Name, opts.Build)
	}
	j := &hashJoin{ctx: ctx, env: env, opts: opts, kind: kind, emit: emit}
	j.res = env.Memory.NewReservation(opts.Name)
	j.res.SetFloor(env.Memory.Floor())
	j.spill = newJoinSpill(env, opts.Name, j.res)
	j.segSize = env.Memory.SegmentSize()
	j.fanout = opts.Partitions
	if j.fanout == 0 {
		j.fanout = joinFanout(env)
	}
	j.stats.Partitions = j.fanout
	j.maxLevel = max(opts.MaxRecursion, 0)
	j.setKind()

	build, probe := left, right
	if !j.buildLeft {
		build, probe = right, left
	}
	err := j.joinLevel(0, build, probe)
	j.stats.BytesSpilled += j.spill.bytesWritten()
	err = errors.Join(err, j.spill.close())
	if rerr := j.res.Release(); rerr != nil {
		err = errors.Join(err, fmt.Errorf("sortjoin: %s: %w", opts.Name, rerr))
	}
	return j.stats, err
}

// joinFanout chooses the partitions per level from the memory available (at
// least the manager's floor): at most DefaultJoinPartitions, at least 2, and two
// segments or spill writers each.
func joinFanout(env resource.Env) int {
	per := max(int64(env.Memory.SegmentSize()), env.Spill.WriterMemory())
	avail := max(env.Memory.Available(), env.Memory.Floor())
	p := DefaultJoinPartitions
	for p > 2 && int64(p)*2*per > avail {
		p >>= 1
	}
	return p
}

// hashJoin is the state of one HashJoin call, shared by all its levels.
type hashJoin struct {
	ctx   context.Context
	env   resource.Env
	opts  HashJoinOptions
	kind  JoinKind
	emit  EmitFunc
	res   *memory.Reservation
	spill joinSpill
	stats JoinStats

	segSize  int
	fanout   int
	maxLevel int

	// What the kind asks for, in build/probe terms (set by setKind).
	buildLeft bool // the build input is the left one
	pairs     bool // emit matching (build, probe) pairs
	probeOnly bool // emit probe records without a match
	probeSemi bool // emit each probe record with a match, once
	buildOnly bool // emit build records without a match, when a partition finishes
	buildSemi bool // emit each build record with a match, once
	bits      bool // keep a matched bit per key

	ks, hs, vs []byte // scratch for build keys and values larger than a segment
	tick       int
	batch      probeBatch
}

func (j *hashJoin) setKind() {
	j.buildLeft = j.opts.Build == Left
	leftOnly := j.kind == LeftOuter || j.kind == FullOuter || j.kind == Anti
	rightOnly := j.kind == RightOuter || j.kind == FullOuter
	j.pairs = j.kind != Semi && j.kind != Anti
	if j.buildLeft {
		j.buildOnly, j.probeOnly = leftOnly, rightOnly
		j.buildSemi = j.kind == Semi
	} else {
		j.buildOnly, j.probeOnly = rightOnly, leftOnly
		j.probeSemi = j.kind == Semi
	}
	j.bits = j.buildOnly || j.buildSemi
}

// joinLevel is one level of the join: the partitions of one (build, probe) pair of
// inputs under one seed.
type joinLevel struct {
	level   int
	seed    uint64
	parts   []joinPart
	spilled int // partitions spilled
	records int // build records in memory
}

// index returns the partition of hash h: a range reduction of its high 32 bits.
func (lv *joinLevel) index(h uint64) int {
	return int((h >> 32) * uint64(len(lv.parts)) >> 32)
}

func (j *hashJoin) checkCtx() error {
	if err := j.ctx.Err(); err != nil {
		return fmt.Errorf("sortjoin: %s: %w", j.opts.Name, err)
	}
	return nil
}

// joinLevel joins build and probe, whose keys hash to one partition of the level
// above (all keys at level 0), partitioning them under seed Seed+level.
func (j *hashJoin) joinLevel(level int, build, probe Iterator) (err error) {
	lv := &joinLevel{level: level, seed: j.opts.Seed + uint64(level), parts: make([]joinPart, j.fanout)}
	for i := range lv.parts {
		lv.parts[i].buf = memory.NewRecordBuffer(j.res)
	}
	defer func() { err = errors.Join(err, j.releaseLevel(lv)) }()
	j.stats.MaxLevel = max(j.stats.MaxLevel, level)
	if err := j.checkCtx(); err != nil {
		return err
	}
	if err := j.build(lv, build); err != nil {
		return err
	}
	if err := j.probe(lv, probe); err != nil {
		return err
	}
	if err := j.finishMemory(lv); err != nil {
		return err
	}
	for i := range lv.parts {
		if lv.parts[i].state == joinPartSpilled {
			if err := j.joinSpilled(lv, i); err != nil {
				return err
			}
		}
	}
	return nil
}

// build reads the build input into the level's partitions, spilling the largest
// partition whenever memory runs out, then builds the in-memory hash tables.
func (j *hashJoin) build(lv *joinLevel, in Iterator) error {
	for {
		if j.tick++; j.tick%joinCtxEvery == 0 {
			if err := j.checkCtx(); err != nil {
				return err
			}
		}
		k, v, ok := in.Next()
		if !ok {
			break
		}
		if lv.level == 0 {
			j.stats.BuildRecords++
		}
		h := memory.Hash(k, lv.seed)
		pi := lv.index(h)
		p := &lv.parts[pi]
		p.note(h)
		if p.state == joinPartSpilled {
			if err := p.bw.AppendKV(k, v); err != nil {
				return j.partErr("write build spill file", lv, pi, err)
			}
			continue
		}
		if err := j.addBuild(lv, pi, k, v); err != nil {
			return err
		}
	}
	if err := in.Err(); err != nil {
		return fmt.Errorf("sortjoin: %s: level %d: read build input: %w", j.opts.Name, lv.level, err)
	}
	for i := range lv.parts {
		p := &lv.parts[i]
		if p.bw == nil {
			continue
		}
		w := p.bw
		p.bw = nil
		h, err := j.spill.finish(w)
		if err != nil {
			return j.partErr("build spill file", lv, i, err)
		}
		p.bh, p.hasBuild = h, true
	}
	ks, hs := cap(j.ks), cap(j.hs)
	for i := range lv.parts {
		if p := &lv.parts[i]; p.state == joinPartMemory && p.n > 0 {
			p.buildTable(lv.seed, j.bits, &j.ks, &j.hs)
			lv.records += p.n
		}
	}
	accountJoinScratch(j.res, ks, j.ks)
	accountJoinScratch(j.res, hs, j.hs)
	return nil
}

// addBuild adds a build record to in-memory partition pi, spilling the largest
// in-memory partitions until it fits or partition pi itself is spilled.
func (j *hashJoin) addBuild(lv *joinLevel, pi int, k, v []byte) error {
	p := &lv.parts[pi]
	for {
		err := p.add(j.res, k, v, j.bits)
		if err == nil {
			return nil
		}
		if !errors.Is(err, memory.ErrBudgetExceeded) {
			return j.partErr("add build record", lv, pi, err)
		}
		victim := pi
		most := p.memBytes(j.segSize)
		for i := range lv.parts {
			q := &lv.parts[i]
			if q.state == joinPartMemory && q.memBytes(j.segSize) > most {
				victim, most = i, q.memBytes(j.segSize)
			}
		}
		if err := j.spillPart(lv, victim); err != nil {
			return err
		}
		if victim == pi {
			if err := p.bw.AppendKV(k, v); err != nil {
				return j.partErr("write build spill file", lv, pi, err)
			}
			return nil
		}
	}
}

// finishMemory emits the unmatched build records of the in-memory partitions, if
// the kind wants them, and frees the partitions' memory.
func (j *hashJoin) finishMemory(lv *joinLevel) error {
	for i := range lv.parts {
		p := &lv.parts[i]
		if p.state != joinPartMemory {
			continue
		}
		if j.buildOnly && p.n > 0 {
			if err := j.checkCtx(); err != nil {
				return err
			}
			for _, e := range p.slots {
				if e == 0 {
					continue
				}
				if head := uint32(e) - 1; !p.marked(head) {
					if err := j.emitChain(p, head); err != nil {
						return err
					}
				}
			}
		}
		p.freeMemory(j.res)
	}
	return nil
}

// partErr wraps err with the operator, level, partition and operation.
func (j *hashJoin) partErr(op string, lv *joinLevel, pi int, err error) error {
	return fmt.Errorf("sortjoin: %s: level %d partition %d: %s: %w", j.opts.Name, lv.level, pi, op, err)
}
