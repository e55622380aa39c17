package dataset

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/internal/wire"
)

// loopLink is the superstep barrier of a spread execution's iterations
// across its processes (Options.Spread). Each process's flow.Iteration
// meets the subtasks that run there; then the decide hook of each process
// with subtasks of the loop meets the others' over a flow.Link on the
// execution's Transport. A part other than 0 sends part 0 its vote: what
// its superstep did (the records each tail received, its aggregators'
// values). Part 0 adds the votes to its own, runs the termination
// criteria on the totals and sends each voter its verdict: the totals and
// whether another superstep follows. So every process's aggregators,
// statistics and criteria see the whole superstep, as in one process.
//
// Votes and verdicts are keyed by loop (its index in the program) and
// superstep; a vote may come before part 0 reaches the barrier. A part
// that ends (its channel ends) before a loop's last verdict, or a broken
// link, fails the loop's barrier here (flow.Iteration.Fail), so the job
// fails in every process and not only in the one that failed first.
type loopLink struct {
	part  int
	l     *flow.Link
	loops []*loop

	mu       sync.Mutex
	votes    map[stepKey]map[int]*ballot // part 0: by loop and superstep, then part
	verdicts map[stepKey]*ballot         // the others
	final    map[int]bool                // loops whose last verdict was sent (part 0) or came
	gone     map[int]bool                // parts whose channel ended
	err      error                       // the link broke
	changed  chan struct{}               // closed and replaced on every change
}

type stepKey struct{ loop, step int }

// ballot is a vote (a part to part 0) or a verdict (part 0 to a part).
type ballot struct {
	verdict    bool
	loop, step int
	more       bool   // a verdict's: another superstep follows
	failure    string // a verdict's: part 0's barrier failed
	counts     []int64
	aggs       [][]byte
}

// openLoopLink opens part's end of the control channels on t of the
// iterations loops, started (translate ran).
func openLoopLink(ctx context.Context, part, parts int, t flow.Transport, loops []*loop) (*loopLink, error) {
	k := &loopLink{part: part, loops: loops, votes: map[stepKey]map[int]*ballot{}, verdicts: map[stepKey]*ballot{},
		final: map[int]bool{}, gone: map[int]bool{}, changed: make(chan struct{})}
	l, err := flow.OpenLink(ctx, part, parts, t, flow.LinkHandlers{
		Message: k.receive,
		Ended: func(from int) {
			k.mu.Lock()
			k.gone[from] = true
			k.wake()
			k.mu.Unlock()
			k.failLoops(from, fmt.Errorf("part %d of the spread job ended", from))
		},
		Broken: func(err error) {
			k.mu.Lock()
			if k.err == nil {
				k.err = err
			}
			k.wake()
			k.mu.Unlock()
			k.failLoops(-1, err)
		},
	})
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	k.l = l
	return k, nil
}

// failLoops fails the barrier of every loop here that part (-1: any)
// takes part in and that did not get or send its last verdict.
func (k *loopLink) failLoops(part int, err error) {
	for _, lp := range k.loops {
		if lp.it == nil {
			continue
		}
		k.mu.Lock()
		done := k.final[lp.index]
		k.mu.Unlock()
		concerned := part < 0 || (k.part == 0 && slices.Contains(lp.voters, part)) || (k.part != 0 && part == 0 && lp.votes(k.part))
		if !done && concerned {
			lp.it.Fail(fmt.Errorf("dataset: %s: %w", lp.name, err))
		}
	}
}

// close ends the link (after sending what it holds).
func (k *loopLink) close() { k.l.Close() }

// wake tells the waiters something changed; k.mu is held.
func (k *loopLink) wake() {
	close(k.changed)
	k.changed = make(chan struct{})
}

func (k *loopLink) receive(from int, b []byte) error {
	m, err := decodeBallot(b)
	if err != nil {
		return err
	}
	key := stepKey{m.loop, m.step}
	k.mu.Lock()
	defer k.mu.Unlock()
	switch {
	case m.verdict && k.part != 0 && from == 0:
		k.verdicts[key] = m
		if !m.more || m.failure != "" {
			k.final[m.loop] = true
		}
	case !m.verdict && k.part == 0:
		if k.votes[key] == nil {
			k.votes[key] = map[int]*ballot{}
		}
		k.votes[key][from] = m
	default:
		return fmt.Errorf("dataset: part %d got a ballot from part %d it does not expect", k.part, from)
	}
	k.wake()
	return nil
}

// wait waits until ok, called with k.mu held, returns true, failing on
// ctx's end, a broken link, or a part in parts whose channel ended first.
func (k *loopLink) wait(ctx context.Context, what string, parts []int, ok func() bool) error {
	for {
		k.mu.Lock()
		if ok() {
			k.mu.Unlock()
			return nil
		}
		if k.err != nil {
			err := k.err
			k.mu.Unlock()
			return fmt.Errorf("dataset: %s: %w", what, err)
		}
		for _, p := range parts {
			if k.gone[p] {
				k.mu.Unlock()
				return fmt.Errorf("dataset: %s: part %d of the spread job ended", what, p)
			}
		}
		ch := k.changed
		k.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// vote is a part's side of lp's barrier at the end of step: it sends
// part 0 what the superstep did here and waits for the verdict.
func (k *loopLink) vote(ctx context.Context, lp *loop, step int, counts []int64, aggs [][]byte) (*ballot, error) {
	k.l.Send(0, (&ballot{loop: lp.index, step: step, counts: counts, aggs: aggs}).encode())
	key := stepKey{lp.index, step}
	what := fmt.Sprintf("%s: superstep %d", lp.name, step)
	var v *ballot
	if err := k.wait(ctx, what, []int{0}, func() bool { v = k.verdicts[key]; return v != nil }); err != nil {
		return nil, err
	}
	k.mu.Lock()
	delete(k.verdicts, key)
	k.mu.Unlock()
	if v.failure != "" {
		return nil, fmt.Errorf("dataset: %s: part 0: %s", what, v.failure)
	}
	if len(v.counts) != len(counts) || len(v.aggs) != len(aggs) {
		return nil, fmt.Errorf("dataset: %s: a verdict of %d counts and %d aggregators, want %d and %d", what, len(v.counts), len(v.aggs), len(counts), len(aggs))
	}
	return v, nil
}

// gather is part 0's side of lp's barrier at the end of step: it waits
// for every voter's vote and returns them.
func (k *loopLink) gather(ctx context.Context, lp *loop, step int) ([]*ballot, error) {
	key := stepKey{lp.index, step}
	what := fmt.Sprintf("%s: superstep %d", lp.name, step)
	var votes map[int]*ballot
	err := k.wait(ctx, what, lp.voters, func() bool {
		votes = k.votes[key]
		return len(votes) == len(lp.voters)
	})
	if err != nil {
		return nil, err
	}
	k.mu.Lock()
	delete(k.votes, key)
	k.mu.Unlock()
	out := make([]*ballot, 0, len(votes))
	for _, p := range lp.voters {
		v := votes[p]
		if v == nil || len(v.counts) != len(lp.tails) || len(v.aggs) != len(lp.aggs) {
			return nil, fmt.Errorf("dataset: %s: part %d voted for another program", what, p)
		}
		out = append(out, v)
	}
	return out, nil
}

// tell sends every voter of lp part 0's verdict on step.
func (k *loopLink) tell(lp *loop, v *ballot) {
	v.verdict = true
	if !v.more || v.failure != "" {
		k.mu.Lock()
		k.final[lp.index] = true
		k.mu.Unlock()
	}
	b := v.encode()
	for _, p := range lp.voters {
		k.l.Send(p, b)
	}
}

// vote adds part to the parts other than 0 that have subtasks of lp.
func (lp *loop) vote(part int) {
	if part != 0 && !lp.votes(part) {
		lp.voters = append(lp.voters, part)
	}
}

// votes reports whether part, not 0, has subtasks of lp.
func (lp *loop) votes(part int) bool { return slices.Contains(lp.voters, part) }

// meet is lp's barrier across the processes at the end of step, in the
// decide hook, before the iteration's hooks and criteria: on a part
// other than 0 it replaces this process's tail counts and aggregator
// values with the totals and returns the verdict; on part 0 it adds
// the other parts' to its own and returns nil (part 0 decides).
func (lp *loop) meet(ctx context.Context, step int) (*ballot, error) {
	k := lp.link
	if k.part == 0 {
		votes, err := k.gather(ctx, lp, step)
		if err != nil {
			return nil, err
		}
		for _, v := range votes {
			for i, t := range lp.tails {
				lp.counts[t].Add(v.counts[i])
			}
			for i, a := range lp.aggs {
				if err := a.merge(v.aggs[i]); err != nil {
					return nil, fmt.Errorf("dataset: %s: aggregator %d: %w", lp.name, i, err)
				}
			}
		}
		return nil, nil
	}
	counts := make([]int64, len(lp.tails))
	for i, t := range lp.tails {
		counts[i] = lp.counts[t].Load()
	}
	aggs, err := lp.aggValues()
	if err != nil {
		return nil, err
	}
	v, err := k.vote(ctx, lp, step, counts, aggs)
	if err != nil {
		return nil, err
	}
	for i, t := range lp.tails {
		lp.counts[t].Store(v.counts[i])
	}
	for i, a := range lp.aggs {
		if err := a.set(v.aggs[i]); err != nil {
			return nil, fmt.Errorf("dataset: %s: aggregator %d: %w", lp.name, i, err)
		}
	}
	return v, nil
}

// aggValues returns the superstep's value of every aggregator of lp,
// encoded.
func (lp *loop) aggValues() ([][]byte, error) {
	out := make([][]byte, len(lp.aggs))
	for i, a := range lp.aggs {
		b, err := a.current()
		if err != nil {
			return nil, fmt.Errorf("dataset: %s: aggregator %d: %w", lp.name, i, err)
		}
		out[i] = b
	}
	return out, nil
}

// spreadable reports why lp cannot run spread: an aggregator whose
// values have no serializer.
func (lp *loop) spreadable() error {
	for i, a := range lp.aggs {
		if err := a.codecErr(); err != nil {
			return fmt.Errorf("dataset: %s: aggregator %d: %w (spread, its values go between processes)", lp.name, i, err)
		}
	}
	return nil
}

// errBallot is a control message that does not decode.
var errBallot = errors.New("dataset: corrupt message at a spread iteration's barrier")

func (m *ballot) encode() []byte {
	var b []byte
	flags := byte(0)
	if m.verdict {
		flags |= 1
	}
	if m.more {
		flags |= 2
	}
	b = append(b, flags)
	b = binary.AppendUvarint(b, uint64(m.loop))
	b = binary.AppendUvarint(b, uint64(m.step))
	b = binary.AppendUvarint(b, uint64(len(m.failure)))
	b = append(b, m.failure...)
	b = binary.AppendUvarint(b, uint64(len(m.counts)))
	for _, c := range m.counts {
		b = binary.AppendVarint(b, c)
	}
	b = binary.AppendUvarint(b, uint64(len(m.aggs)))
	for _, a := range m.aggs {
		b = binary.AppendUvarint(b, uint64(len(a)))
		b = append(b, a...)
	}
	return b
}

func decodeBallot(b []byte) (*ballot, error) {
	d := wire.Decoder{B: b}
	flags := d.Byte()
	m := &ballot{verdict: flags&1 != 0, more: flags&2 != 0, loop: d.Int(), step: d.Int(), failure: d.LenString()}
	if n := d.Count(); d.Err == nil {
		m.counts = make([]int64, n)
		for i := range m.counts {
			m.counts[i] = d.Varint()
		}
	}
	if n := d.Count(); d.Err == nil {
		m.aggs = make([][]byte, n)
		for i := range m.aggs {
			m.aggs[i] = d.Bytes(d.Uvarint())
		}
	}
	if d.Err == nil && len(d.B) > 0 {
		d.Fail("%d bytes after the message", len(d.B))
	}
	if d.Err == nil && flags > 3 {
		d.Fail("flags %#x", flags)
	}
	if d.Err != nil {
		return nil, fmt.Errorf("%w: %w", errBallot, d.Err)
	}
	return m, nil
}
