package state

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync/atomic"
)

// cow holds the copy-on-write versions of a heap backend, as Flink's
// CopyOnWriteStateMap: every container of entries (a key group's slot table
// or map of a state, a key group's timers) and every entry reached by
// pointer (a key's map) is stamped with the version current
// when it was made or copied. A capture takes the next version and keeps the
// containers as they are; a container or entry stamped below the highest
// version a live capture holds may be in a capture, so a write copies it
// first and changes the copy. Without live captures need is zero and writes
// check one field.
type cow struct {
	ver  uint64   // stamped on what is made or copied now
	need uint64   // the highest version of a live capture, 0 when none
	live []uint64 // the versions of the live captures
}

// shared reports whether what is stamped v may be held by a live capture.
func (c *cow) shared(v uint64) bool { return v < c.need }

// release ends the copy-on-write for capture version v.
func (c *cow) release(v uint64) {
	if i := slices.Index(c.live, v); i >= 0 {
		c.live = slices.Delete(c.live, i, i+1)
	}
	c.need = 0
	for _, l := range c.live {
		c.need = max(c.need, l)
	}
}

// frozen is a state's or timer service's containers as a capture keeps
// them: they do not change while the capture is live.
type frozen interface {
	// write is registered.write on the captured containers.
	write(dst []byte, idx int, now int64) ([]byte, int)
}

// w returns group idx's map for a write: copied first when a live capture
// may hold it, made when there is none.
func (t *table[K, N, S]) w(c *cow, idx int) map[nsKey[K, N]]S {
	m := t.groups[idx]
	if c.need != 0 && c.shared(t.vers[idx]) {
		m = maps.Clone(m)
		t.groups[idx], t.vers[idx] = m, c.ver
	}
	if m == nil {
		m = map[nsKey[K, N]]S{}
		t.groups[idx], t.vers[idx] = m, c.ver
	}
	return m
}

// freeze returns the groups' maps as they are.
func (t *table[K, N, S]) freeze() []map[nsKey[K, N]]S { return slices.Clone(t.groups) }

// Capture is a consistent capture of a heap backend's keyed state and
// timers, taken at a checkpoint barrier in time proportional to the number
// of states and key groups (Flink's HeapSnapshotStrategy's synchronous
// part). WriteTo writes it, in Snapshot's format and with Snapshot's bytes
// at the time of the capture, on any goroutine, while the backend's
// goroutine goes on changing the state: a write to what a live capture holds
// copies it first (copy on write). Release ends the copy-on-write for the
// capture; it is called on the backend's goroutine, once WriteTo returned
// or will not be called.
//
// A disk backend writes its snapshot into the capture at once (Capture is
// synchronous there) and WriteTo copies it out.
type Capture struct {
	name     string
	maxP     int
	start    int // the backend's first key group
	rng      KeyGroupRange
	now      int64
	parts    []capturedState
	schemas  []*stateSchema // the schema frames
	pending  [][]section    // by pending key, in key order
	buf      []byte         // a disk backend's snapshot
	release  func()
	released atomic.Bool
}

type capturedState struct {
	name string
	kind Kind
	f    frozen
}

// Capture captures the state and timers of the backend's key groups within
// groups for a Snapshot written later by the capture's WriteTo.
func (b *Backend[K]) Capture(groups KeyGroupRange) (*Capture, error) {
	if b.disposed {
		return nil, fmt.Errorf("state: %s: capture of a disposed backend", b.name)
	}
	c := &Capture{name: b.name, maxP: b.maxP, start: b.groups.Start, rng: b.groups.Intersect(groups), now: b.now()}
	if b.store != nil {
		var buf bytes.Buffer
		if err := b.Snapshot(&buf, groups); err != nil {
			return nil, err
		}
		c.buf, c.release = buf.Bytes(), func() {}
		return c, nil
	}
	for _, m := range []map[string]registered{b.states, b.timers} {
		for _, r := range m {
			if s, ok := r.(settler); ok {
				s.settle()
			}
		}
	}
	b.cow.ver++
	v := b.cow.ver
	b.cow.live = append(b.cow.live, v)
	b.cow.need = v
	c.release = func() { b.cow.release(v) }
	for _, m := range []map[string]registered{b.states, b.timers} {
		names := slices.Sorted(maps.Keys(m))
		for _, name := range names {
			r := m[name]
			c.parts = append(c.parts, capturedState{name: name, kind: r.kind(), f: r.freeze()})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(b.pending)) {
		c.pending = append(c.pending, slices.Clone(b.pending[k]))
	}
	c.schemas = b.schemaFrames(true)
	return c, nil
}

// Release ends the capture's copy-on-write; WriteTo fails afterwards.
// Calling it again does nothing.
func (c *Capture) Release() {
	if c.released.Swap(true) {
		return
	}
	c.release()
}

// WriteTo writes the captured snapshot to w and returns the bytes written.
func (c *Capture) WriteTo(w io.Writer) (int64, error) {
	if c.released.Load() {
		return 0, fmt.Errorf("state: %s: snapshot of a released capture", c.name)
	}
	cw := &countingWriter{w: w}
	if c.buf != nil {
		_, err := cw.Write(c.buf)
		if err != nil {
			err = fmt.Errorf("state: %s: snapshot: %w", c.name, err)
		}
		return cw.n, err
	}
	if err := c.write(bufio.NewWriter(cw)); err != nil {
		return cw.n, fmt.Errorf("state: %s: snapshot: %w", c.name, err)
	}
	return cw.n, nil
}

// write writes the frames as Backend.snapshot does.
func (c *Capture) write(bw *bufio.Writer) error {
	var payload []byte
	payload = append(payload, snapshotMagic...)
	payload = appendUvarint(payload, snapshotVersion)
	payload = appendUvarint(payload, uint64(c.maxP))
	if err := writeFrame(bw, frameHeader, payload); err != nil {
		return err
	}
	if err := writeSchemaFrames(bw, c.schemas); err != nil {
		return err
	}
	sections := 0
	var entries []byte
	for g := c.rng.Start; g <= c.rng.End; g++ {
		idx := g - c.start
		for _, s := range c.parts {
			var n int
			entries, n = s.f.write(entries[:0], idx, c.now)
			if n == 0 {
				continue
			}
			payload = appendSection(payload[:0], s.name, s.kind, g, n, entries)
			if err := writeFrame(bw, frameSection, payload); err != nil {
				return err
			}
			sections++
		}
		for _, secs := range c.pending {
			for _, sec := range secs {
				if sec.group != g {
					continue
				}
				payload = appendSection(payload[:0], sec.name, sec.kind, g, sec.count, sec.data)
				if err := writeFrame(bw, frameSection, payload); err != nil {
					return err
				}
				sections++
			}
		}
	}
	if err := writeFrame(bw, frameEnd, appendUvarint(payload[:0], uint64(sections))); err != nil {
		return err
	}
	return bw.Flush()
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// freeze keeps the cells' slot tables for a capture; the cache of the last
// cell found is dropped, as it may point into them.
func (s *cells[K, N, V]) freeze() frozen {
	s.hit = nil
	return &frozenCells[K, N, V]{s: s, slots: slices.Clone(s.slots)}
}

type frozenCells[K, N comparable, V any] struct {
	s     *cells[K, N, V]
	slots []slotTable[nsKey[K, N], V]
}

func (f *frozenCells[K, N, V]) write(dst []byte, idx int, now int64) ([]byte, int) {
	return f.s.writeFrom(dst, &f.slots[idx], now)
}

// own makes group index idx's slot table the backend's own: copied when a
// live capture may hold it.
func (s *cells[K, N, V]) own(idx int) {
	c := &s.b.cow
	if t := &s.slots[idx]; c.shared(t.ver) {
		t.slots, t.ver = slices.Clone(t.slots), c.ver
		s.hit = nil
	}
}

func (s *List[K, N, V]) freeze() frozen {
	return &frozenList[K, N, V]{s: s, groups: s.t.freeze()}
}

type frozenList[K, N comparable, V any] struct {
	s      *List[K, N, V]
	groups []map[nsKey[K, N]]listEntry[V]
}

func (f *frozenList[K, N, V]) write(dst []byte, idx int, now int64) ([]byte, int) {
	return f.s.writeFrom(dst, f.groups[idx], now)
}

func (s *Map[K, N, UK, UV]) freeze() frozen {
	return &frozenMap[K, N, UK, UV]{s: s, groups: s.t.freeze()}
}

type frozenMap[K, N comparable, UK comparable, UV any] struct {
	s      *Map[K, N, UK, UV]
	groups []map[nsKey[K, N]]*mapEntry[UK, UV]
}

func (f *frozenMap[K, N, UK, UV]) write(dst []byte, idx int, now int64) ([]byte, int) {
	return f.s.writeFrom(dst, f.groups[idx], now)
}

// curW is cur for a change: the current key's map entry and the group's
// map are the backend's own.
func (s *Map[K, N, UK, UV]) curW() (*mapEntry[UK, UV], nsKey[K, N], int) {
	e, k, idx := s.cur()
	if e == nil || s.b.cow.need == 0 {
		return e, k, idx
	}
	c := &s.b.cow
	m := s.t.w(c, idx)
	if c.shared(e.ver) {
		e = &mapEntry[UK, UV]{m: maps.Clone(e.m), sz: e.sz, ver: c.ver}
		m[k] = e
	}
	return e, k, idx
}

// settler is a state or timer service that defers changes (the timers
// registered without an index): settle makes them before a capture takes
// its copy-on-write version. Made after it, a change would copy a
// container and stamp the copy with the capture's version, which the
// capture then holds while writes treat it as the backend's own.
type settler interface{ settle() }

// settle indexes the timers registered without an index, which a capture
// writes through the index.
func (t *Timers[K, N]) settle() {
	t.event.indexAll()
	t.proc.indexAll()
}

// freeze keeps the timers' indexes, settled before, for a capture.
func (t *Timers[K, N]) freeze() frozen {
	return &frozenTimers[K, N]{t: t, event: slices.Clone(t.event.pos), proc: slices.Clone(t.proc.pos)}
}

type frozenTimers[K, N comparable] struct {
	t           *Timers[K, N]
	event, proc []timerIndex[K, N]
}

func (f *frozenTimers[K, N]) write(dst []byte, idx int, _ int64) ([]byte, int) {
	return f.t.writeFrom(dst, &f.event[idx], &f.proc[idx])
}

// posW returns group idx's timers for a change: copied first when a live
// capture may hold them.
func (q *queue[K, N]) posW(idx int) *timerIndex[K, N] {
	t := &q.pos[idx]
	if c := q.cow; c.need != 0 && c.shared(t.ver) {
		t.slots, t.ver = slices.Clone(t.slots), c.ver
	}
	return t
}

// freeze is not called: a disk backend's capture is its snapshot.
func (s *storeRaw[K]) freeze() frozen { return s }

// curTTL is cur for a read, and curW when TTL may remove or restamp entries.
func (s *Map[K, N, UK, UV]) curTTL() (*mapEntry[UK, UV], nsKey[K, N], int) {
	if s.ttl.on {
		return s.curW()
	}
	return s.cur()
}
