package streaming

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/sink"
	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/state"
	"github.com/weirdata/weir/stream/watermark"
)

// StateMachineParams configure RunStateMachine.
type StateMachineParams struct {
	// Events bounds the generated stream; zero or less makes it unbounded.
	Events int64
	// Rate is the events per second the generator releases; zero or less
	// means as fast as they are processed.
	Rate float64
	// ErrorRate is the probability of an invalid transition (Flink's
	// --error-rate).
	ErrorRate float64
	// Seed seeds the generator.
	Seed int64
	// Output is a directory to write the alerts to as part files (one
	// alert a line, committed when a bounded stream ends); "" prints them
	// to Options.Stdout.
	Output string
}

// RunStateMachine is Flink's StateMachineExample: events of one
// EventsGenerator (a source of parallelism 1, so the stream depends on the
// seed alone), keyed by address, run through StateMachine; alerts are
// printed, or written to part files under p.Output.
func RunStateMachine(ctx context.Context, o Options, p StateMachineParams) error {
	g, err := NewEventsGenerator(p.Seed, p.ErrorRate)
	if err != nil {
		return err
	}
	env := o.newEnv()
	events := stream.FromSource(env, source.Generator(generatorFunc(g), p.Events, p.Rate),
		watermark.NoWatermarks[Event](), "Events Generator Source").SetParallelism(1)
	alerts := StateMachine(stream.KeyBy(events, func(e Event) int32 { return e.Address }))
	if p.Output != "" {
		stream.SinkTo(alerts, sink.Rows(p.Output, func(dst []byte, a Alert) []byte { return append(append(dst, a.String()...), '\n') }))
	} else {
		stream.PrintTo(alerts, o.Stdout, "")
	}
	if _, err := env.Execute(ctx); err != nil {
		return fmt.Errorf("examples/streaming: state machine: %w", err)
	}
	return nil
}

// generatorFunc hands out g's events in index order (the source runs one
// reader of one split, which asks for indexes 0, 1, 2, ...).
func generatorFunc(g *EventsGenerator) func(int64) Event {
	var mu sync.Mutex
	return func(int64) Event {
		mu.Lock()
		defer mu.Unlock()
		return g.Next(0, math.MaxInt32)
	}
}

// StateMachine is Flink's StateMachineMapper: the state of each address in
// a ValueState (Initial when empty); an event that is no transition of it
// gives an Alert, a transition to Terminal clears the state, any other
// updates it.
func StateMachine(events stream.KeyedStream[Event, int32]) stream.DataStream[Alert] {
	return stream.KeyedProcess(events, func() stream.KeyedProcessFunction[int32, Event, Alert] {
		var current state.ValueState[State]
		return stream.KeyedProcessFunction[int32, Event, Alert]{
			Open: func(rc *stream.KeyedRuntimeContext[int32]) (err error) {
				current, err = stream.GetState(rc, state.ValueDescriptor[State]{Name: "state"})
				return err
			},
			ProcessElement: func(e Event, _ *stream.KeyedContext[int32], out stream.Collector[Alert]) error {
				s, ok := current.Value()
				if !ok {
					s = Initial
				}
				switch next := s.Transition(e.Type); {
				case next == InvalidTransition:
					out.Collect(Alert{Address: e.Address, State: s, Transition: e.Type})
				case next.IsTerminal():
					current.Clear()
				default:
					current.Update(next)
				}
				return nil
			},
		}
	})
}
