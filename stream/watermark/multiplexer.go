package watermark

import "fmt"

// Multiplexer combines the watermarks and idleness of several outputs (one
// per split) into one underlying Output, as Flink 1.20's
// WatermarkOutputMultiplexer does. The combined watermark is the minimum over
// the registered outputs that are not idle; it is emitted only when it
// increases. When an update finds every output idle the underlying output is
// marked idle and the watermark does not move. With no outputs registered
// nothing is reported.
//
// Each output has an immediate form, whose updates are combined at once
// (MarkIdle and MarkActive always, EmitWatermark when it raises the output's
// watermark above the combined one), and a deferred form, whose updates wait
// for OnPeriodicEmit. Not safe for concurrent use.
type Multiplexer struct {
	out      Output
	byID     map[string]*partial
	parts    []*partial // in registration order
	combined int64
	idle     bool
}

// partial is one output's state: its highest watermark and whether it is idle.
type partial struct {
	wm   int64
	idle bool
}

// set raises the watermark and marks the output active; it reports whether
// the watermark rose.
func (p *partial) set(wm int64) bool {
	p.idle = false
	if wm > p.wm {
		p.wm = wm
		return true
	}
	return false
}

// NewMultiplexer returns a Multiplexer emitting to out.
func NewMultiplexer(out Output) *Multiplexer {
	return &Multiplexer{out: out, byID: map[string]*partial{}, combined: Min}
}

// Register adds an output named id, at watermark Min and active.
func (m *Multiplexer) Register(id string) error {
	if _, ok := m.byID[id]; ok {
		return fmt.Errorf("watermark: the multiplexer already has an output %q", id)
	}
	p := &partial{wm: Min}
	m.byID[id] = p
	m.parts = append(m.parts, p)
	return nil
}

// Seed sets the watermark of the output named id (registered, still at
// Min) to wm, reporting nothing: a restored split starts at the watermark
// it had reached.
func (m *Multiplexer) Seed(id string, wm int64) error {
	p, ok := m.byID[id]
	if !ok {
		return fmt.Errorf("watermark: the multiplexer has no output %q", id)
	}
	p.wm = max(p.wm, wm)
	return nil
}

// Watermark returns the watermark of the output named id (Min when there is
// none).
func (m *Multiplexer) Watermark(id string) int64 {
	if p, ok := m.byID[id]; ok {
		return p.wm
	}
	return Min
}

// OutputIdle reports whether the output named id is idle (false when there
// is none).
func (m *Multiplexer) OutputIdle(id string) bool {
	p, ok := m.byID[id]
	return ok && p.idle
}

// Unregister removes the output named id, and reports whether there was one.
// The combined watermark does not move until the next update.
func (m *Multiplexer) Unregister(id string) bool {
	p, ok := m.byID[id]
	if !ok {
		return false
	}
	delete(m.byID, id)
	for i, q := range m.parts {
		if q == p {
			m.parts = append(m.parts[:i], m.parts[i+1:]...)
			break
		}
	}
	return true
}

// Immediate returns the immediate form of the output named id.
func (m *Multiplexer) Immediate(id string) (Output, error) {
	p, ok := m.byID[id]
	if !ok {
		return nil, fmt.Errorf("watermark: the multiplexer has no output %q", id)
	}
	return immediate{m, p}, nil
}

// Deferred returns the deferred form of the output named id.
func (m *Multiplexer) Deferred(id string) (Output, error) {
	p, ok := m.byID[id]
	if !ok {
		return nil, fmt.Errorf("watermark: the multiplexer has no output %q", id)
	}
	return deferred{p}, nil
}

// OnPeriodicEmit combines the deferred updates and reports the result.
func (m *Multiplexer) OnPeriodicEmit() { m.update() }

// Combined returns the combined watermark emitted last (Min before any).
func (m *Multiplexer) Combined() int64 { return m.combined }

// Idle reports whether the last update found every output idle.
func (m *Multiplexer) Idle() bool { return m.idle }

// update recomputes the combined watermark; it emits it when it rose, and
// otherwise marks the underlying output idle when every output is idle.
func (m *Multiplexer) update() {
	if len(m.parts) == 0 {
		return
	}
	lowest, allIdle := Max, true
	for _, p := range m.parts {
		if !p.idle {
			lowest = min(lowest, p.wm)
			allIdle = false
		}
	}
	m.idle = allIdle
	if !allIdle && lowest > m.combined {
		m.combined = lowest
		m.out.EmitWatermark(lowest)
	} else if allIdle {
		m.out.MarkIdle()
	}
}

type immediate struct {
	m *Multiplexer
	p *partial
}

func (o immediate) EmitWatermark(wm int64) {
	// only a rise above the combined watermark can move it
	if o.p.set(wm) && wm > o.m.combined {
		o.m.update()
	}
}

func (o immediate) MarkIdle() {
	o.p.idle = true
	o.m.update()
}

func (o immediate) MarkActive() {
	o.p.idle = false
	o.m.update()
}

type deferred struct{ p *partial }

func (o deferred) EmitWatermark(wm int64) { o.p.set(wm) }
func (o deferred) MarkIdle()              { o.p.idle = true }
func (o deferred) MarkActive()            { o.p.idle = false }
