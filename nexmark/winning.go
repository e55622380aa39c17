package nexmark

import (
	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/state"
	"github.com/weirdata/weir/stream/watermark"
)

// The winning bids of auctions, q4 and q9: the bids B on an auction A
// with A.dateTime <= B.dateTime <= A.expires, and the best of them.
//
// Both run winning, a KeyedCoProcess keyed by the auction's id. It keeps
// the auction, the best valid bid so far, and the bids that came before
// their auction (a bid may name an auction not made yet, and the input
// may be out of order). A waiting bid is dropped once the watermark
// passes its time: an auction that comes later is later than the
// watermark, so it starts after the bid. A key with waiting bids has one
// cleanup timer, at the earliest of them. The auction is settled when the
// watermark passes its expiry, since every later bid is later than it:
// its best bid is then final and goes out, and its state is cleared. At
// the end of a bounded input (and in BATCH mode, at the end of each key)
// every auction settles. So the rows of q9 and the finals q4 averages
// come once each, as Beam's WinningBids emits them when auctions close.

// winning emits, per auction with at least one valid bid, emit(auction,
// best bid) when the auction settles. from and to give an auction's
// valid bid times; at gives a bid's time; better says whether a bid beats
// the best so far.
func winning[A, B, O any](auctions stream.KeyedStream[A, int64], bids stream.KeyedStream[B, int64],
	from, to func(A) int64, at func(B) int64, better func(b, best B) bool, emit func(A, B) O) stream.DataStream[O] {
	return stream.KeyedCoProcess(stream.ConnectKeyed(auctions, bids), func() stream.KeyedCoProcessFunction[int64, A, B, O] {
		var (
			auction state.ValueState[A]
			best    state.ValueState[B]
			waiting state.ListState[B]
			cleanup state.ValueState[int64] // the time of the waiting bids' timer
		)
		// offer makes b the best bid if it is valid for a and beats it.
		offer := func(a A, b B) {
			t := at(b)
			if t < from(a) || t > to(a) {
				return
			}
			if cur, ok := best.Value(); !ok || better(b, cur) {
				best.Update(b)
			}
		}
		return stream.KeyedCoProcessFunction[int64, A, B, O]{
			Open: func(ctx *stream.KeyedRuntimeContext[int64]) error {
				var err error
				if auction, err = state.GetValueState(ctx.Backend(), state.ValueDescriptor[A]{Name: "auction"}); err != nil {
					return err
				}
				if best, err = state.GetValueState(ctx.Backend(), state.ValueDescriptor[B]{Name: "best"}); err != nil {
					return err
				}
				if waiting, err = state.GetListState(ctx.Backend(), state.ListDescriptor[B]{Name: "waiting"}); err != nil {
					return err
				}
				cleanup, err = state.GetValueState(ctx.Backend(), state.ValueDescriptor[int64]{Name: "cleanup"})
				return err
			},
			ProcessElement1: func(a A, ctx *stream.KeyedContext[int64], _ stream.Collector[O]) error {
				auction.Update(a)
				ctx.RegisterEventTimeTimer(to(a))
				if early := waiting.Get(); len(early) > 0 {
					for _, b := range early {
						offer(a, b)
					}
					waiting.Clear()
					cleanup.Clear()
				}
				return nil
			},
			ProcessElement2: func(b B, ctx *stream.KeyedContext[int64], _ stream.Collector[O]) error {
				if a, ok := auction.Value(); ok {
					offer(a, b)
					return nil
				}
				// the first waiting bid sets the key's cleanup timer
				if _, ok := cleanup.Value(); !ok {
					ctx.RegisterEventTimeTimer(at(b))
					cleanup.Update(at(b))
				}
				waiting.Add(b)
				return nil
			},
			OnTimer: func(ts int64, ctx *stream.KeyedContext[int64], out stream.Collector[O]) error {
				a, ok := auction.Value()
				if !ok {
					// drop the waiting bids the watermark passed; the
					// earliest left sets the next cleanup
					early := waiting.Get()
					keep, next := early[:0], int64(watermark.Max)
					for _, b := range early {
						if t := at(b); t > ts {
							keep = append(keep, b)
							next = min(next, t)
						}
					}
					if len(keep) < len(early) {
						waiting.Update(keep)
					}
					if len(keep) > 0 {
						ctx.RegisterEventTimeTimer(next)
						cleanup.Update(next)
					} else {
						cleanup.Clear()
					}
					return nil
				}
				if ts < to(a) {
					return nil // a waiting bid's timer: the auction settles at its expiry
				}
				if b, ok := best.Value(); ok {
					out.Collect(emit(a, b))
				}
				auction.Clear()
				best.Clear()
				waiting.Clear()
				cleanup.Clear()
				return nil
			},
		}
	})
}

// q4Auction is what q4 needs of an auction.
type q4Auction struct{ ID, DateTime, Expires, Category int64 }

// q4Bid is what q4 needs of a bid.
type q4Bid struct{ Auction, Price, DateTime int64 }

// q4Final is an auction's final price in its category.
type q4Final struct{ Category, Price int64 }

// q4Avg is a category's sum and count of final prices.
type q4Avg struct{ Sum, Count int64 }

// q4Row is a row of q4.
type q4Row struct {
	Op       Op
	Category int64
	Avg      float64
}

// q4 averages the final prices of the auctions of each category: the
// highest valid bid of each (winning), summed per category. In a bounded
// run a category's row goes out at the end of the input; in a changelog
// every settled auction updates its category (+I, then -U and +U).
func q4(b *build, events stream.DataStream[Event]) {
	auctions := stream.FlatMap(events, func(e Event, emit func(q4Auction)) {
		if e.Kind == KindAuction {
			a := &e.Auction
			emit(q4Auction{ID: a.ID, DateTime: a.DateTime, Expires: a.Expires, Category: a.Category})
		}
	}).Name("Auctions")
	bidsOn := stream.FlatMap(events, func(e Event, emit func(q4Bid)) {
		if e.Kind == KindBid {
			emit(q4Bid{Auction: e.Bid.Auction, Price: e.Bid.Price, DateTime: e.Bid.DateTime})
		}
	}).Name("Bids")
	finals := winning(
		stream.KeyBy(auctions, func(a q4Auction) int64 { return a.ID }),
		stream.KeyBy(bidsOn, func(b q4Bid) int64 { return b.Auction }),
		func(a q4Auction) int64 { return a.DateTime },
		func(a q4Auction) int64 { return a.Expires },
		func(b q4Bid) int64 { return b.DateTime },
		func(b, best q4Bid) bool { return b.Price > best.Price },
		func(a q4Auction, b q4Bid) q4Final { return q4Final{Category: a.Category, Price: b.Price} }).
		Name("WinningBids").UID("q4-winning")
	changelog := b.p.Changelog
	rows := stream.KeyedProcess(stream.KeyBy(finals, func(f q4Final) int64 { return f.Category }),
		func() stream.KeyedProcessFunction[int64, q4Final, q4Row] {
			var sums state.ValueState[q4Avg]
			return stream.KeyedProcessFunction[int64, q4Final, q4Row]{
				Open: func(ctx *stream.KeyedRuntimeContext[int64]) error {
					var err error
					sums, err = state.GetValueState(ctx.Backend(), state.ValueDescriptor[q4Avg]{Name: "sum"})
					return err
				},
				ProcessElement: func(f q4Final, ctx *stream.KeyedContext[int64], out stream.Collector[q4Row]) error {
					s, ok := sums.Value()
					switch {
					case changelog && ok:
						out.Collect(q4Row{Op: UpdateBefore, Category: f.Category, Avg: s.avg()})
					case !ok && !changelog:
						ctx.RegisterEventTimeTimer(watermark.Max)
					}
					s.Sum += f.Price
					s.Count++
					sums.Update(s)
					if changelog {
						op := Insert
						if ok {
							op = UpdateAfter
						}
						out.Collect(q4Row{Op: op, Category: f.Category, Avg: s.avg()})
					}
					return nil
				},
				OnTimer: func(_ int64, ctx *stream.KeyedContext[int64], out stream.Collector[q4Row]) error {
					if s, ok := sums.Value(); ok {
						out.Collect(q4Row{Category: ctx.CurrentKey(), Avg: s.avg()})
					}
					return nil
				},
			}
		}).Name("AverageByCategory").UID("q4-average")
	output(b, rows, func(dst []byte, v q4Row) []byte {
		if changelog {
			dst = append(append(dst, v.Op.String()...), ',')
		}
		dst = appendInt(dst, v.Category)
		dst = append(dst, ',')
		return appendDouble(dst, v.Avg)
	})
}

func (s q4Avg) avg() float64 { return float64(s.Sum) / float64(s.Count) }

// q9Bid is what q9 keeps of a bid: its columns in q9's rows.
type q9Bid struct {
	Auction, Bidder, Price, DateTime int64
	Extra                            string
}

// q9Row is a row of q9: an auction and its winning bid.
type q9Row struct {
	Op Op
	A  Auction
	B  q9Bid
}

// q9 finds the winning bid of every auction: the highest valid bid, the
// earliest of equal ones. Its rows are final when they come (op +I in a
// changelog).
func q9(b *build, events stream.DataStream[Event]) {
	auctions := stream.FlatMap(events, func(e Event, emit func(Auction)) {
		if e.Kind == KindAuction {
			emit(e.Auction)
		}
	}).Name("Auctions")
	bidsOn := stream.FlatMap(events, func(e Event, emit func(q9Bid)) {
		if e.Kind == KindBid {
			b := &e.Bid
			emit(q9Bid{Auction: b.Auction, Bidder: b.Bidder, Price: b.Price, DateTime: b.DateTime, Extra: b.Extra})
		}
	}).Name("Bids")
	rows := winning(
		stream.KeyBy(auctions, func(a Auction) int64 { return a.ID }),
		stream.KeyBy(bidsOn, func(b q9Bid) int64 { return b.Auction }),
		func(a Auction) int64 { return a.DateTime },
		func(a Auction) int64 { return a.Expires },
		func(b q9Bid) int64 { return b.DateTime },
		func(b, best q9Bid) bool {
			return b.Price > best.Price || b.Price == best.Price && b.DateTime < best.DateTime
		},
		func(a Auction, b q9Bid) q9Row { return q9Row{A: a, B: b} }).Name("WinningBids").UID("q9-winning")
	changelog := b.p.Changelog
	output(b, rows, func(dst []byte, v q9Row) []byte {
		if changelog {
			dst = append(append(dst, v.Op.String()...), ',')
		}
		a := &v.A
		dst = appendInt(dst, a.ID)
		dst = append(dst, ',')
		dst = appendField(dst, a.ItemName)
		dst = append(dst, ',')
		dst = appendField(dst, a.Description)
		for _, x := range [...]int64{a.InitialBid, a.Reserve, a.DateTime, a.Expires, a.Seller, a.Category} {
			dst = append(dst, ',')
			dst = appendInt(dst, x)
		}
		dst = append(dst, ',')
		dst = appendField(dst, a.Extra)
		dst = append(dst, ',')
		return appendBid(dst, Bid{Auction: v.B.Auction, Bidder: v.B.Bidder, Price: v.B.Price, DateTime: v.B.DateTime, Extra: v.B.Extra})
	})
}
