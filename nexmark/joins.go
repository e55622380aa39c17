package nexmark

import (
	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/state"
)

// The joins of persons and auctions on the seller: q3 (unwindowed) and q8
// (in tumbling windows). Both run as a KeyedCoProcess keyed by the
// person's id, the auction's seller.

// windowSize is the size of the tumbling windows of q7 and q8, and of the
// hop windows of q5.
const windowSize = 10_000

// windowStart is the start of the tumbling window of t: windows are
// aligned to epoch 0.
func windowStart(t int64) int64 { return t - floorMod(t, windowSize) }

// q3Person is what q3 keeps of a person.
type q3Person struct{ Name, City, State string }

// q3Auction is what q3 needs of an auction.
type q3Auction struct{ ID, Seller int64 }

// q3Row is a row of q3: the seller's name, city and state, and the
// auction's id.
type q3Row struct {
	Op                Op
	Name, City, State string
	ID                int64
}

// q3 joins the auctions of category 10 with their sellers who live in
// Oregon, Idaho or California. Each person's row waits in keyed state;
// an auction before its seller waits as its id. The join of two streams
// that only insert only inserts: its rows are final as they come (op
// +I in a changelog).
func q3(b *build, events stream.DataStream[Event]) {
	persons := stream.FlatMap(events, func(e Event, emit func(Person)) {
		if e.Kind == KindPerson {
			switch e.Person.State {
			case "OR", "ID", "CA":
				emit(e.Person)
			}
		}
	}).Name("Persons")
	auctions := stream.FlatMap(events, func(e Event, emit func(q3Auction)) {
		if e.Kind == KindAuction && e.Auction.Category == 10 {
			emit(q3Auction{ID: e.Auction.ID, Seller: e.Auction.Seller})
		}
	}).Name("Auctions")
	rows := stream.KeyedCoProcess(stream.ConnectKeyed(
		stream.KeyBy(persons, func(p Person) int64 { return p.ID }),
		stream.KeyBy(auctions, func(a q3Auction) int64 { return a.Seller })),
		func() stream.KeyedCoProcessFunction[int64, Person, q3Auction, q3Row] {
			var (
				person  state.ValueState[q3Person]
				waiting state.ListState[int64]
			)
			return stream.KeyedCoProcessFunction[int64, Person, q3Auction, q3Row]{
				Open: func(ctx *stream.KeyedRuntimeContext[int64]) error {
					var err error
					if person, err = state.GetValueState(ctx.Backend(), state.ValueDescriptor[q3Person]{Name: "person"}); err != nil {
						return err
					}
					waiting, err = state.GetListState(ctx.Backend(), state.ListDescriptor[int64]{Name: "auctions"})
					return err
				},
				ProcessElement1: func(p Person, ctx *stream.KeyedContext[int64], out stream.Collector[q3Row]) error {
					person.Update(q3Person{Name: p.Name, City: p.City, State: p.State})
					for _, id := range waiting.Get() {
						out.Collect(q3Row{Name: p.Name, City: p.City, State: p.State, ID: id})
					}
					waiting.Clear()
					return nil
				},
				ProcessElement2: func(a q3Auction, ctx *stream.KeyedContext[int64], out stream.Collector[q3Row]) error {
					if p, ok := person.Value(); ok {
						out.Collect(q3Row{Name: p.Name, City: p.City, State: p.State, ID: a.ID})
						return nil
					}
					waiting.Add(a.ID)
					return nil
				},
			}
		}).Name("IncrementalJoin").UID("q3-join")
	changelog := b.p.Changelog
	output(b, rows, func(dst []byte, v q3Row) []byte {
		if changelog {
			dst = append(append(dst, v.Op.String()...), ',')
		}
		dst = appendField(dst, v.Name)
		dst = append(dst, ',')
		dst = appendField(dst, v.City)
		dst = append(dst, ',')
		dst = appendField(dst, v.State)
		dst = append(dst, ',')
		return appendInt(dst, v.ID)
	})
}

// q8Person is what q8 needs of a person.
type q8Person struct {
	ID       int64
	Name     string
	DateTime int64
}

// q8Auction is what q8 needs of an auction.
type q8Auction struct{ Seller, DateTime int64 }

// q8Cell is what q8 knows of a person id in one window.
type q8Cell struct {
	Name                      string
	Person, Auction, Reported bool
}

// q8Row is a row of q8.
type q8Row struct {
	ID         int64
	Name       string
	Start, End int64
}

// q8 finds the persons who opened an auction in the 10 s window they
// registered in. Per id and window (a namespace of keyed state) it notes
// whether the person and an auction of theirs came, reports the pair
// once both did, and forgets the window when the watermark passes its
// end.
func q8(b *build, events stream.DataStream[Event]) {
	persons := stream.FlatMap(events, func(e Event, emit func(q8Person)) {
		if e.Kind == KindPerson {
			emit(q8Person{ID: e.Person.ID, Name: e.Person.Name, DateTime: e.Person.DateTime})
		}
	}).Name("Persons")
	auctions := stream.FlatMap(events, func(e Event, emit func(q8Auction)) {
		if e.Kind == KindAuction {
			emit(q8Auction{Seller: e.Auction.Seller, DateTime: e.Auction.DateTime})
		}
	}).Name("Auctions")
	rows := stream.KeyedCoProcess(stream.ConnectKeyed(
		stream.KeyBy(persons, func(p q8Person) int64 { return p.ID }),
		stream.KeyBy(auctions, func(a q8Auction) int64 { return a.Seller })),
		func() stream.KeyedCoProcessFunction[int64, q8Person, q8Auction, q8Row] {
			var cells *state.Value[int64, int64, q8Cell]
			// note records that the person (named name) or an auction came
			// in the window of t, and reports the person once both did.
			note := func(t int64, ctx *stream.KeyedContext[int64], out stream.Collector[q8Row], person bool, name string) {
				start := windowStart(t)
				cells.SetNamespace(start)
				c, ok := cells.Value()
				if !ok {
					ctx.RegisterEventTimeTimer(start + windowSize - 1)
				}
				if person {
					c.Person, c.Name = true, name
				} else {
					c.Auction = true
				}
				if c.Person && c.Auction && !c.Reported {
					c.Reported = true
					out.Collect(q8Row{ID: ctx.CurrentKey(), Name: c.Name, Start: start, End: start + windowSize})
				}
				cells.Update(c)
			}
			return stream.KeyedCoProcessFunction[int64, q8Person, q8Auction, q8Row]{
				Open: func(ctx *stream.KeyedRuntimeContext[int64]) error {
					var err error
					cells, err = state.NewValue[int64, int64](ctx.Backend(), state.ValueDescriptor[q8Cell]{Name: "windows"})
					return err
				},
				ProcessElement1: func(p q8Person, ctx *stream.KeyedContext[int64], out stream.Collector[q8Row]) error {
					note(p.DateTime, ctx, out, true, p.Name)
					return nil
				},
				ProcessElement2: func(a q8Auction, ctx *stream.KeyedContext[int64], out stream.Collector[q8Row]) error {
					note(a.DateTime, ctx, out, false, "")
					return nil
				},
				OnTimer: func(ts int64, ctx *stream.KeyedContext[int64], _ stream.Collector[q8Row]) error {
					cells.SetNamespace(ts + 1 - windowSize)
					cells.Clear()
					return nil
				},
			}
		}).Name("WindowJoin").UID("q8-join")
	output(b, rows, func(dst []byte, v q8Row) []byte {
		dst = appendInt(dst, v.ID)
		dst = append(dst, ',')
		dst = appendField(dst, v.Name)
		dst = append(dst, ',')
		dst = appendInt(dst, v.Start)
		dst = append(dst, ',')
		return appendInt(dst, v.End)
	})
}
