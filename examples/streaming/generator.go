package streaming

import (
	"fmt"
	"math"
	"slices"
)

// EventsGenerator is Flink's EventsGenerator: it keeps up to about 1000
// state machines (addresses and their current states, in insertion order,
// as a LinkedHashMap) and each Next either starts a machine at a new random
// address or moves one of the first 21 on by a random transition (with
// probability ErrorProb an invalid one, which ends that machine). Machines
// that reach Terminal are dropped. The same seed gives the same events.
type EventsGenerator struct {
	rnd       *javaRandom
	errorProb float64
	order     []machine // insertion order
	active    map[int32]bool
}

type machine struct {
	address int32
	state   State
}

// NewEventsGenerator returns a generator drawing from seed; errorProb is
// in [0, 1].
func NewEventsGenerator(seed int64, errorProb float64) (*EventsGenerator, error) {
	if !(errorProb >= 0 && errorProb <= 1) {
		return nil, fmt.Errorf("examples/streaming: error probability %v must be in [0, 1]", errorProb)
	}
	return &EventsGenerator{rnd: newJavaRandom(seed), errorProb: errorProb, active: map[int32]bool{}}, nil
}

// Next returns the next event, with a new address drawn from [minIP, maxIP).
func (g *EventsGenerator) Next(minIP, maxIP int32) Event {
	for {
		p := g.rnd.nextDouble()
		if p*1000 >= float64(len(g.order)) {
			ip := g.rnd.nextInt(maxIP-minIP) + minIP
			if g.active[ip] {
				continue // collision on an address: try again
			}
			e, s := Initial.randomTransition(g.rnd)
			g.order = append(g.order, machine{ip, s})
			g.active[ip] = true
			return Event{Type: e, Address: ip}
		}
		skip := min(20, int(g.rnd.nextInt(int32(len(g.order)))))
		m := g.order[skip]
		g.order = slices.Delete(g.order, skip, skip+1)
		delete(g.active, m.address)
		if p < g.errorProb {
			return Event{Type: m.state.randomInvalidTransition(g.rnd), Address: m.address}
		}
		e, s := m.state.randomTransition(g.rnd)
		if !s.IsTerminal() {
			g.order = append(g.order, machine{m.address, s})
			g.active[m.address] = true
		}
		return Event{Type: e, Address: m.address}
	}
}

// GenerateEvents returns the first n events of a generator from seed over
// the whole address range, the events RunStateMachine processes.
func GenerateEvents(seed int64, errorProb float64, n int) ([]Event, error) {
	g, err := NewEventsGenerator(seed, errorProb)
	if err != nil {
		return nil, err
	}
	out := make([]Event, n)
	for i := range out {
		out[i] = g.Next(0, math.MaxInt32)
	}
	return out, nil
}
