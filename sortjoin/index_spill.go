package sortjoin

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/spill"
)

// The spilling half of Index: writing a bucket out, the pending logs of spilled
// buckets, and loading a spilled bucket to replay its log (FinishProbes,
// ApplyPending, All).
//
// A pending log record is a tag byte (idxTagUpsert or idxTagProbe) followed by
// memory.AppendKV(key, value or payload).

// bucketErr wraps err with the index, bucket and operation.
func (x *Index) bucketErr(op string, bi int, err error) error {
	return fmt.Errorf("sortjoin: index %s: bucket %d: %s: %w", x.opts.Name, bi, op, err)
}

// ctxErr returns the context's error, wrapped.
func (x *Index) ctxErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sortjoin: index %s: %w", x.opts.Name, err)
	}
	return nil
}

// logAppend appends one record to spilled bucket bi's pending log, creating the log
// on first use. Errors are sticky.
func (x *Index) logAppend(bi int, tag byte, key, val []byte) error {
	b := &x.buckets[bi]
	if b.log == nil {
		w, err := x.spill.create()
		if err != nil {
			return x.fail(x.bucketErr("create pending log", bi, err))
		}
		b.log = w
		x.notePeak()
	}
	x.rec = memory.AppendKV(append(x.rec[:0], tag), key, val)
	x.accountScratch()
	if err := b.log.Append(x.rec); err != nil {
		return x.fail(x.bucketErr("write pending log", bi, err))
	}
	if tag == idxTagProbe {
		b.probes++
		x.stats.DeferredProbes++
	} else {
		b.updates++
		x.stats.PendingUpdates++
	}
	return nil
}

// spillLargest spills the resident bucket holding the most memory, or bucket cur
// when none holds more than it.
func (x *Index) spillLargest(cur int) error {
	victim, most := cur, x.memBytes(&x.buckets[cur].tab)
	for i := range x.buckets {
		b := &x.buckets[i]
		if m := x.memBytes(&b.tab); !b.spilled && m > most {
			victim, most = i, m
		}
	}
	return x.spillBucket(victim)
}

// spillBucket writes resident bucket bi's records to its data file (none if it is
// empty), frees its memory and marks it spilled, for good.
func (x *Index) spillBucket(bi int) error {
	b := &x.buckets[bi]
	t := &b.tab
	if t.count > 0 {
		h, err := x.writeTable(t)
		if err != nil {
			return x.bucketErr("spill", bi, err)
		}
		b.data, b.hasData = h, true
	}
	b.records = int64(t.count)
	x.freeTable(t)
	b.spilled = true
	x.stats.SpilledBuckets++
	return nil
}

// writeTable writes t's records to a new spill file.
func (x *Index) writeTable(t *idxTable) (spill.Handle, error) {
	w, err := x.spill.create()
	if err != nil {
		return spill.Handle{}, err
	}
	x.notePeak()
	for i := range t.slots {
		s := &t.slots[i]
		if s.off == 0 {
			continue
		}
		k, v, sc := t.buf.Get(s.off-1, x.scratch)
		x.scratch = sc
		if err := w.AppendKV(k, v); err != nil {
			x.spill.abort(w)
			return spill.Handle{}, err
		}
	}
	x.accountScratch()
	return x.spill.finish(w)
}

// FinishProbes answers the deferred probes: for each spilled bucket whose pending
// log holds probes, it loads the bucket (past the budget if it must, one bucket at a
// time), replays its log in call order (applying upserts, running fn for each
// probe), writes the bucket back with the upserts applied and drops the loaded
// copy. fn may call Upsert, but not Probe or the other methods; its upserts come
// after every deferred probe. The context is checked once per bucket and every 4096
// records. An error (of fn, the context or a spill file) is sticky.
func (x *Index) FinishProbes(ctx context.Context, fn ProbeFunc) error {
	if err := x.check("FinishProbes", idxIdle); err != nil {
		return err
	}
	if fn == nil {
		return x.fail(fmt.Errorf("sortjoin: index %s: FinishProbes: nil ProbeFunc", x.opts.Name))
	}
	x.phase = idxFinishing
	defer x.endPhase()
	for bi := range x.buckets {
		if b := &x.buckets[bi]; !b.spilled || b.probes == 0 {
			continue
		}
		if err := x.settle(ctx, bi, fn); err != nil {
			return x.fail(err)
		}
		x.freeTable(&x.load)
	}
	return nil
}

// ApplyPending applies the pending upserts of every spilled bucket (load, apply in
// order, write back), so that the next superstep sees them and Len counts them.
// Later upserts of a key win. It fails if probes are pending: call FinishProbes
// first. The context is checked once per bucket and every 4096 records; an error is
// sticky.
func (x *Index) ApplyPending(ctx context.Context) error {
	if err := x.check("ApplyPending", idxIdle); err != nil {
		return err
	}
	if err := x.noPendingProbes("ApplyPending"); err != nil {
		return err
	}
	x.phase = idxBusy
	defer x.endPhase()
	for bi := range x.buckets {
		if b := &x.buckets[bi]; !b.spilled || b.updates == 0 {
			continue
		}
		if err := x.settle(ctx, bi, nil); err != nil {
			return x.fail(err)
		}
		x.freeTable(&x.load)
	}
	return nil
}

// All calls fn once for every (key, value) of the index, resident and spilled, in
// no particular order; pending upserts are applied first (as ApplyPending does,
// bucket by bucket). key and value are valid only during fn, which must not call
// the index. It fails if probes are pending: call FinishProbes first. An error of
// fn, the context or a spill file is sticky.
func (x *Index) All(ctx context.Context, fn func(key, value []byte) error) error {
	if err := x.check("All", idxIdle); err != nil {
		return err
	}
	if err := x.noPendingProbes("All"); err != nil {
		return err
	}
	x.phase = idxBusy
	defer x.endPhase()
	for bi := range x.buckets {
		if err := x.ctxErr(ctx); err != nil {
			return x.fail(err)
		}
		b := &x.buckets[bi]
		var err error
		switch {
		case !b.spilled:
			err = x.scanTable(ctx, &b.tab, fn)
		case b.updates > 0:
			if err = x.settle(ctx, bi, nil); err == nil {
				err = x.scanTable(ctx, &x.load, fn)
			}
			x.freeTable(&x.load)
		case b.hasData:
			err = x.scanFile(ctx, bi, fn)
		}
		if err != nil {
			return x.fail(err)
		}
	}
	return nil
}

// endPhase returns to idle after FinishProbes, ApplyPending or All, unless Close ran
// from a callback.
func (x *Index) endPhase() {
	if x.phase != idxClosed {
		x.phase = idxIdle
	}
}

// noPendingProbes fails (sticky) if a spilled bucket holds deferred probes.
func (x *Index) noPendingProbes(op string) error {
	for bi := range x.buckets {
		if x.buckets[bi].probes > 0 {
			return x.fail(fmt.Errorf("sortjoin: index %s: %s with deferred probes pending (bucket %d): call FinishProbes first", x.opts.Name, op, bi))
		}
	}
	return nil
}

// scanTable calls fn for every record of t.
func (x *Index) scanTable(ctx context.Context, t *idxTable, fn func(key, value []byte) error) error {
	for i := range t.slots {
		if i&ctxCheckMask == ctxCheckMask {
			if err := x.ctxErr(ctx); err != nil {
				return err
			}
		}
		s := &t.slots[i]
		if s.off == 0 {
			continue
		}
		k, v, sc := t.buf.Get(s.off-1, x.scratch)
		if cap(sc) != cap(x.scratch) {
			x.scratch = sc
			x.accountScratch()
		}
		if err := fn(k, v); err != nil {
			return fmt.Errorf("sortjoin: index %s: All callback: %w", x.opts.Name, err)
		}
	}
	return nil
}

// scanFile calls fn for every record of spilled bucket bi's data file, read
// straight from the file.
func (x *Index) scanFile(ctx context.Context, bi int, fn func(key, value []byte) error) error {
	r, err := x.spill.open(x.buckets[bi].data)
	if err != nil {
		return x.bucketErr("read data file", bi, err)
	}
	x.notePeak()
	for n := 0; ; n++ {
		if n&ctxCheckMask == ctxCheckMask {
			if err = x.ctxErr(ctx); err != nil {
				break
			}
		}
		k, v, rerr := r.NextKV()
		if rerr != nil {
			if !errors.Is(rerr, io.EOF) {
				err = x.bucketErr("read data file", bi, rerr)
			}
			break
		}
		if err = fn(k, v); err != nil {
			err = fmt.Errorf("sortjoin: index %s: All callback: %w", x.opts.Name, err)
			break
		}
	}
	return errors.Join(err, x.spill.closeReader(r))
}

// settle loads spilled bucket bi into x.load: its data file, then its pending log
// replayed in order (upserts applied, probes answered by fn, which is nil when the
// log holds none). If the log held upserts, the loaded records replace the data
// file. The log is removed and the bucket's pending counters start again at zero
// (fn's upserts go to a new log). The caller frees x.load.
func (x *Index) settle(ctx context.Context, bi int, fn ProbeFunc) error {
	if err := x.ctxErr(ctx); err != nil {
		return err
	}
	b := &x.buckets[bi]
	x.stats.Loads++
	var logH spill.Handle
	hasLog, updates := b.log != nil, b.updates
	if hasLog {
		w := b.log
		b.log, b.updates, b.probes = nil, 0, 0
		h, err := x.spill.finish(w)
		if err != nil {
			return x.bucketErr("finish pending log", bi, err)
		}
		logH = h
	}
	t := &x.load
	if b.hasData {
		if err := x.readFile(ctx, bi, b.data, false, nil); err != nil {
			return err
		}
	}
	if hasLog {
		if err := x.readFile(ctx, bi, logH, true, fn); err != nil {
			return err
		}
	}
	if updates > 0 {
		h, err := x.writeTable(t)
		if err != nil {
			return x.bucketErr("write back", bi, err)
		}
		if b.hasData {
			b.hasData = false
			if err := x.spill.remove(b.data); err != nil {
				return x.bucketErr("write back", bi, err)
			}
		}
		b.data, b.hasData = h, true
		x.n += int64(t.count) - b.records
		b.records = int64(t.count)
	}
	if hasLog {
		if err := x.spill.remove(logH); err != nil {
			return x.bucketErr("remove pending log", bi, err)
		}
	}
	return nil
}

// readFile reads file h of bucket bi into x.load: a data file (pairs) or, with log,
// a pending log (upserts applied, probes answered by fn).
func (x *Index) readFile(ctx context.Context, bi int, h spill.Handle, log bool, fn ProbeFunc) error {
	what := "read data file"
	if log {
		what = "replay pending log"
	}
	r, err := x.spill.open(h)
	if err != nil {
		return x.bucketErr(what, bi, err)
	}
	x.notePeak()
	t := &x.load
	for n := 0; ; n++ {
		if n&ctxCheckMask == ctxCheckMask {
			if err = x.ctxErr(ctx); err != nil {
				break
			}
		}
		var k, v []byte
		tag := byte(idxTagUpsert)
		if log {
			rec, rerr := r.Next()
			if rerr == nil {
				if len(rec) == 0 || (rec[0] != idxTagUpsert && rec[0] != idxTagProbe) {
					rerr = fmt.Errorf("%w: bad pending-log record", spill.ErrCorrupt)
				} else {
					tag = rec[0]
					k, v, rerr = memory.SplitKV(rec[1:])
				}
			}
			err = rerr
		} else {
			k, v, err = r.NextKV()
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			} else {
				err = x.bucketErr(what, bi, err)
			}
			break
		}
		hk := memory.Hash(k, x.opts.Seed)
		if tag == idxTagUpsert {
			if _, perr := x.put(t, k, v, hk, true); perr != nil {
				err = x.bucketErr(what, bi, perr)
				break
			}
			continue
		}
		if fn == nil {
			err = x.bucketErr(what, bi, errors.New("deferred probe without a ProbeFunc"))
			break
		}
		_, val, found := x.find(t, k, hk)
		if err = fn(v, val, found); err != nil {
			err = fmt.Errorf("sortjoin: index %s: probe callback: %w", x.opts.Name, err)
			break
		}
	}
	x.notePeak()
	return errors.Join(err, x.spill.closeReader(r))
}
