package op

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/weirdata/weir/stream/internal/core"
	"github.com/weirdata/weir/stream/internal/task"
	"github.com/weirdata/weir/stream/state"
)

// BroadcastState is one broadcast state an operator registers: its name
// and how to make it in a backend.
type BroadcastState struct {
	Name     string
	Register func(b *state.Backend[int]) (any, error)
}

// BroadcastStates are an operator instance's broadcast states: map states
// in a backend of one key group and one key, so that every instance holds
// the whole state and its snapshot restores into any instance (Flink's
// rule on rescaling: each new instance gets a copy).
type BroadcastStates struct {
	descs   []BroadcastState
	backend *state.Backend[int]
	states  map[string]any
}

// NewBroadcastStates returns the broadcast states of descs.
func NewBroadcastStates(descs []BroadcastState) *BroadcastStates {
	return &BroadcastStates{descs: descs}
}

// Lookup returns the broadcast state named name (a *state.Map).
func (s *BroadcastStates) Lookup(name string) (any, bool) {
	st, ok := s.states[name]
	return st, ok
}

// open makes the backend, restores snap (may be nil) and registers the
// descriptors.
func (s *BroadcastStates) open(st *task.Setup, snap []byte) error {
	b, err := state.NewBackend[int](state.Options{
		Name: st.Name + " (broadcast state)", MaxParallelism: 1, Groups: state.KeyGroupRange{Start: 0, End: 0},
		Memory: st.Memory(), Clock: st.Now,
	})
	if err != nil {
		return err
	}
	s.backend = b
	if snap != nil {
		if err := b.Restore(bytes.NewReader(snap)); err != nil {
			return err
		}
	}
	b.SetCurrentKeyInGroup(0, 0)
	s.states = map[string]any{}
	for _, d := range s.descs {
		v, err := d.Register(b)
		if err != nil {
			return err
		}
		s.states[d.Name] = v
	}
	return nil
}

func (s *BroadcastStates) err() error { return s.backend.Err() }

func (s *BroadcastStates) snapshot(w io.Writer) error {
	return s.backend.Snapshot(w, s.backend.Groups())
}

func (s *BroadcastStates) close() error {
	if s.backend == nil {
		return nil
	}
	err := s.backend.Dispose()
	s.backend = nil
	return err
}

// BroadcastFns are a BroadcastProcessFunction's functions, typed by the
// API's read-only context R, read-write context RW and collector Col.
type BroadcastFns[A, B, R, RW, Col any] struct {
	Open                    func() error
	ProcessElement          func(v A, ctx R, out Col) error
	ProcessBroadcastElement func(v B, ctx RW, out Col) error
	Close                   func() error
}

// BroadcastProcess is the non-keyed broadcast operator (Flink's
// CoBroadcastWithNonKeyedOperator); its snapshot is its broadcast states.
type BroadcastProcess[A, B, O, R, RW, Col any] struct {
	task.Base
	fn     BroadcastFns[A, B, R, RW, Col]
	bs     *BroadcastStates
	st     *Ctx
	ro     R
	rw     RW
	col    Col
	outs   *Outputs[O]
	opened bool
}

// NewBroadcastProcess returns the operator of fn over bs, whose contexts
// ro and rw read st.
func NewBroadcastProcess[A, B, O, R, RW, Col any](fn BroadcastFns[A, B, R, RW, Col], bs *BroadcastStates, st *Ctx, ro R, rw RW, col Col, outs *Outputs[O]) *BroadcastProcess[A, B, O, R, RW, Col] {
	return &BroadcastProcess[A, B, O, R, RW, Col]{fn: fn, bs: bs, st: st, ro: ro, rw: rw, col: col, outs: outs}
}

// Open restores the broadcast states and opens the function.
func (p *BroadcastProcess[A, B, O, R, RW, Col]) Open(s *task.Setup) error {
	if err := p.bs.open(s, s.RestoredOne()); err != nil {
		return err
	}
	p.opened = true
	if p.fn.Open != nil {
		return p.fn.Open()
	}
	return nil
}

func (p *BroadcastProcess[A, B, O, R, RW, Col]) done() error {
	if err := p.bs.err(); err != nil {
		return err
	}
	return p.outs.Flush()
}

// Inputs returns the operator's two inputs: the plain stream and the
// broadcast one.
func (p *BroadcastProcess[A, B, O, R, RW, Col]) Inputs() []any {
	return []any{core.PushFunc[A](func(b []core.Record[A]) error {
		for i := range b {
			p.st.TS = b[i].Timestamp
			if err := p.fn.ProcessElement(b[i].Value, p.ro, p.col); err != nil {
				return err
			}
		}
		return p.done()
	}), core.PushFunc[B](func(b []core.Record[B]) error {
		for i := range b {
			p.st.TS = b[i].Timestamp
			if err := p.fn.ProcessBroadcastElement(b[i].Value, p.rw, p.col); err != nil {
				return err
			}
		}
		return p.done()
	})}
}

// Snapshot writes the broadcast states.
func (p *BroadcastProcess[A, B, O, R, RW, Col]) Snapshot(_ int64, w io.Writer) error {
	return p.bs.snapshot(w)
}

// Close closes the function and the states.
func (p *BroadcastProcess[A, B, O, R, RW, Col]) Close() error {
	var err error
	if p.fn.Close != nil && p.opened {
		p.opened = false
		err = p.fn.Close()
	}
	if cerr := p.bs.close(); err == nil {
		err = cerr
	}
	return err
}

// KeyedBroadcast is the keyed broadcast operator (Flink's
// CoBroadcastWithKeyedOperator): a KeyedProcess operator for the keyed
// input (Inner) with broadcast states beside its keyed backend. Its
// snapshot holds both: the keyed part restores by key group, the broadcast
// part whole into every instance.
type KeyedBroadcast[A any, K comparable, B, O, C, Col, RW any] struct {
	Inner *KeyedProcess[struct{}, K, O, C, Col]
	bs    *BroadcastStates
	in1   core.PushFunc[A]
	fn    func(v B, ctx RW, out Col) error
	rw    RW
}

// NewKeyedBroadcast returns the operator of inner over bs: processElement
// gets the keyed records, processBroadcast the broadcast ones with rw.
func NewKeyedBroadcast[A any, K comparable, B, O, C, Col, RW any](inner *KeyedProcess[struct{}, K, O, C, Col], bs *BroadcastStates,
	key func(A) K, processElement func(A, C, Col) error, processBroadcast func(B, RW, Col) error, rw RW) *KeyedBroadcast[A, K, B, O, C, Col, RW] {
	p := &KeyedBroadcast[A, K, B, O, C, Col, RW]{Inner: inner, bs: bs, fn: processBroadcast, rw: rw}
	p.in1 = KeyedInput(inner, key, processElement)
	return p
}

// Backend returns the keyed backend (ApplyToKeyedState).
func (p *KeyedBroadcast[A, K, B, O, C, Col, RW]) Backend() *state.Backend[K] { return p.Inner.Backend }

// Inputs returns the operator's two inputs: the keyed stream and the
// broadcast one.
func (p *KeyedBroadcast[A, K, B, O, C, Col, RW]) Inputs() []any {
	return []any{p.in1, p.BroadcastInput()}
}

// BroadcastInput returns the broadcast input.
func (p *KeyedBroadcast[A, K, B, O, C, Col, RW]) BroadcastInput() core.PushFunc[B] {
	return func(b []core.Record[B]) error {
		in := p.Inner
		in.Backend.ClearCurrentKey()
		for i := range b {
			in.st.TS = b[i].Timestamp
			if err := p.fn(b[i].Value, p.rw, in.col); err != nil {
				return err
			}
		}
		if err := p.bs.err(); err != nil {
			return err
		}
		return in.done()
	}
}

// Open restores the broadcast part into every instance and the keyed part
// into the inner operator.
func (p *KeyedBroadcast[A, K, B, O, C, Col, RW]) Open(s *task.Setup) error {
	var keyed [][]byte
	var bcast []byte
	for i, snap := range s.Restored() {
		parts, err := readParts(snap, 2)
		if err != nil {
			return err
		}
		if parts[0] != nil {
			keyed = append(keyed, parts[0])
		}
		if i == 0 {
			bcast = parts[1] // every subtask's broadcast states are the same
		}
	}
	if err := p.bs.open(s, bcast); err != nil {
		return err
	}
	return p.Inner.Open(s.WithRestored(keyed))
}

// Push feeds the keyed input (BATCH mode's sorted input).
func (p *KeyedBroadcast[A, K, B, O, C, Col, RW]) Push(b []core.Record[A]) error { return p.in1(b) }

// The lifecycle of the inner operator.
func (p *KeyedBroadcast[A, K, B, O, C, Col, RW]) EndKey() error { return p.Inner.EndKey() }
func (p *KeyedBroadcast[A, K, B, O, C, Col, RW]) OnWatermark(wm int64) error {
	return p.Inner.OnWatermark(wm)
}
func (p *KeyedBroadcast[A, K, B, O, C, Col, RW]) OnProcessingTime(now int64) error {
	return p.Inner.OnProcessingTime(now)
}
func (p *KeyedBroadcast[A, K, B, O, C, Col, RW]) NextProcessingTime() (int64, bool) {
	return p.Inner.NextProcessingTime()
}
func (p *KeyedBroadcast[A, K, B, O, C, Col, RW]) NotifyCheckpointComplete(id int64) error {
	return p.Inner.NotifyCheckpointComplete(id)
}
func (p *KeyedBroadcast[A, K, B, O, C, Col, RW]) EndInput() error { return p.Inner.EndInput() }

// Snapshot writes the keyed part and the broadcast part.
func (p *KeyedBroadcast[A, K, B, O, C, Col, RW]) Snapshot(id int64, w io.Writer) error {
	inner := func(w io.Writer) error { return p.Inner.Snapshot(id, w) }
	return writeParts(w, inner, p.bs.snapshot)
}

// Close closes the inner operator and the states.
func (p *KeyedBroadcast[A, K, B, O, C, Col, RW]) Close() error {
	err := p.Inner.Close()
	if cerr := p.bs.close(); err == nil {
		err = cerr
	}
	return err
}

// writeParts writes snapshot parts, each length-prefixed.
func writeParts(w io.Writer, parts ...func(io.Writer) error) error {
	var buf bytes.Buffer
	var n [binary.MaxVarintLen64]byte
	for _, p := range parts {
		buf.Reset()
		if err := p(&buf); err != nil {
			return err
		}
		if _, err := w.Write(n[:binary.PutUvarint(n[:], uint64(buf.Len()))]); err != nil {
			return err
		}
		if _, err := w.Write(buf.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

// readParts splits a snapshot writeParts wrote into want parts; a nil
// snapshot gives nil parts.
func readParts(snap []byte, want int) ([][]byte, error) {
	parts := make([][]byte, want)
	if snap == nil {
		return parts, nil
	}
	for i := range parts {
		n, k := binary.Uvarint(snap)
		if k <= 0 || uint64(len(snap)-k) < n {
			return nil, fmt.Errorf("stream: broadcast operator: %w", state.ErrCorruptSnapshot)
		}
		if n > 0 {
			parts[i] = snap[k : k+int(n)]
		}
		snap = snap[k+int(n):]
	}
	return parts, nil
}
