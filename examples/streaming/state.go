package streaming

import (
	"fmt"
	"strconv"
)

// EventType is the type of an event of the state machine example: a to g.
type EventType uint8

// The event types, as Flink's EventType enum.
const (
	EventA EventType = iota
	EventB
	EventC
	EventD
	EventE
	EventF
	EventG
	numEventTypes
)

func (t EventType) String() string { return string(rune('a' + t)) }

// State is a state of the example's state machine, as Flink's State enum:
//
//	        +--[a]--> W --[b]--> Y --[e]---+
//	        |                    ^         |
//	Initial-+                    |         |
//	        |                    |         +--> (Z)-----[g]---> Terminal
//	        +--[c]--> X --[b]----+         |
//	                  |                    |
//	                  +--------[d]---------+
type State uint8

// The states, in the order of Flink's enum.
const (
	Terminal State = iota
	InvalidTransition
	StateZ
	StateY
	StateX
	StateW
	Initial
)

var stateNames = [...]string{"Terminal", "InvalidTransition", "Z", "Y", "X", "W", "Initial"}

func (s State) String() string { return stateNames[s] }

// transition is an edge of the state machine with the probability the
// generator takes it with.
type transition struct {
	event EventType
	to    State
	prob  float32
}

// transitions are each state's outgoing edges, in Flink's order.
var transitions = [...][]transition{
	StateZ:  {{EventG, Terminal, 1}},
	StateY:  {{EventE, StateZ, 1}},
	StateX:  {{EventB, StateY, 0.2}, {EventD, StateZ, 0.8}},
	StateW:  {{EventB, StateY, 1}},
	Initial: {{EventA, StateW, 0.6}, {EventC, StateX, 0.4}},
}

// IsTerminal says whether s has no outgoing transitions.
func (s State) IsTerminal() bool { return len(transitions[s]) == 0 }

// Transition returns the state after event e, or InvalidTransition.
func (s State) Transition(e EventType) State {
	for _, t := range transitions[s] {
		if t.event == e {
			return t.to
		}
	}
	return InvalidTransition
}

// randomTransition picks an outgoing transition by its probability, as
// State.randomTransition (float arithmetic, as in Java).
func (s State) randomTransition(rnd *javaRandom) (EventType, State) {
	p := rnd.nextFloat()
	var mass float32
	ts := transitions[s]
	for _, t := range ts {
		mass += t.prob
		if p <= mass {
			return t.event, t.to
		}
	}
	last := ts[len(ts)-1] // rounding: Java's assert would fail; take the last
	return last.event, last.to
}

// randomInvalidTransition draws event types until one is invalid in s.
func (s State) randomInvalidTransition(rnd *javaRandom) EventType {
	for {
		e := EventType(rnd.nextInt(int32(numEventTypes)))
		if s.Transition(e) == InvalidTransition {
			return e
		}
	}
}

// Event is an event of an address (a 32-bit IPv4 address).
type Event struct {
	Type    EventType
	Address int32
}

func (e Event) String() string { return "Event " + FormatAddress(e.Address) + " : " + e.Type.String() }

// Alert reports an invalid transition: the address, the state it was in
// and the event that did not fit.
type Alert struct {
	Address    int32
	State      State
	Transition EventType
}

// String is Flink's Alert.toString: "ALERT 0.0.7.220 : W -> c".
func (a Alert) String() string {
	return fmt.Sprintf("ALERT %s : %s -> %s", FormatAddress(a.Address), a.State, a.Transition)
}

// FormatAddress prints an address as a dotted IPv4 address, most
// significant byte first.
func FormatAddress(a int32) string {
	u := uint32(a)
	b := make([]byte, 0, 15)
	for i, shift := range [4]uint{24, 16, 8, 0} {
		if i > 0 {
			b = append(b, '.')
		}
		b = strconv.AppendUint(b, uint64(u>>shift&0xff), 10)
	}
	return string(b)
}
