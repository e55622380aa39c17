package nexmark

import (
	"slices"
	"time"

	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/state"
	"github.com/weirdata/weir/stream/window"
)

// The windowed queries over bids: q5 (hop windows), q7 (tumbling
// windows) and q11 (sessions). Windows are aligned to epoch 0 and are
// [start, end); a window's results carry the time end - 1, so a keyed
// operator downstream fires a timer at end - 1 once the watermark says
// every result of the window came.

// count counts the elements of a window.
type count struct{}

func (count) CreateAccumulator() int64     { return 0 }
func (count) Add(_ int64, n int64) int64   { return n + 1 }
func (count) GetResult(n int64) int64      { return n }
func (count) Merge(a, b int64) int64       { return a + b }
func self(v int64) int64                   { return v }
func windowEnd(r windowCount) int64        { return r.End }
func bidAuction(e Event, emit func(int64)) { emitBidField(e, emit, true) }
func bidBidder(e Event, emit func(int64))  { emitBidField(e, emit, false) }

func emitBidField(e Event, emit func(int64), auction bool) {
	if e.Kind != KindBid {
		return
	}
	if auction {
		emit(e.Bid.Auction)
	} else {
		emit(e.Bid.Bidder)
	}
}

// windowCount is a key's count in a window: a row of q5 and of q11.
type windowCount struct {
	Key, Count, Start, End int64
}

func appendWindowCount(dst []byte, v windowCount) []byte {
	dst = appendInt(dst, v.Key)
	dst = append(dst, ',')
	dst = appendInt(dst, v.Count)
	dst = append(dst, ',')
	dst = appendInt(dst, v.Start)
	dst = append(dst, ',')
	return appendInt(dst, v.End)
}

// counts counts the elements of each key and window of ws.
func counts(ws stream.WindowedStream[int64, int64, window.TimeWindow]) stream.DataStream[windowCount] {
	return stream.WindowAggregateProcess(ws, count{}, func() stream.ProcessWindowFunction[int64, window.TimeWindow, int64, windowCount] {
		return stream.ProcessWindowFunction[int64, window.TimeWindow, int64, windowCount]{
			Process: func(key int64, ctx *stream.WindowContext[int64, window.TimeWindow], accs []int64, out stream.Collector[windowCount]) error {
				w := ctx.Window()
				for _, n := range accs {
					out.Collect(windowCount{Key: key, Count: n, Start: w.Start, End: w.End})
				}
				return nil
			},
		}
	})
}

// q5Top is the largest count of a window and the auctions that have it.
type q5Top struct {
	Count    int64
	Auctions []int64
}

// q5 finds the hot items: per hop window of 10 s sliding by 2 s, the
// auctions with the most bids (several on a tie). The bids are counted
// per auction and window; the counts of a window then meet, keyed by the
// window's end, where the largest is kept until the window's time
// passes.
func q5(b *build, events stream.DataStream[Event]) {
	auctions := stream.FlatMap(events, bidAuction).Name("BidAuctions")
	ws := stream.Window(stream.KeyBy(auctions, self), window.SlidingEventTimeWindows(windowSize*time.Millisecond, 2*time.Second))
	perAuction := counts(ws).Name("CountBids").UID("q5-count")
	rows := stream.KeyedProcess(stream.KeyBy(perAuction, windowEnd), func() stream.KeyedProcessFunction[int64, windowCount, windowCount] {
		var top state.ValueState[q5Top]
		return stream.KeyedProcessFunction[int64, windowCount, windowCount]{
			Open: func(ctx *stream.KeyedRuntimeContext[int64]) error {
				var err error
				top, err = state.GetValueState(ctx.Backend(), state.ValueDescriptor[q5Top]{Name: "top"})
				return err
			},
			ProcessElement: func(c windowCount, ctx *stream.KeyedContext[int64], _ stream.Collector[windowCount]) error {
				t, ok := top.Value()
				switch {
				case !ok:
					ctx.RegisterEventTimeTimer(c.End - 1)
					top.Update(q5Top{Count: c.Count, Auctions: []int64{c.Key}})
				case c.Count > t.Count:
					top.Update(q5Top{Count: c.Count, Auctions: []int64{c.Key}})
				case c.Count == t.Count:
					// a state's value is not changed in place
					top.Update(q5Top{Count: c.Count, Auctions: append(slices.Clip(t.Auctions), c.Key)})
				}
				return nil
			},
			OnTimer: func(ts int64, ctx *stream.KeyedContext[int64], out stream.Collector[windowCount]) error {
				t, ok := top.Value()
				if !ok {
					return nil
				}
				end := ts + 1
				for _, a := range t.Auctions {
					out.Collect(windowCount{Key: a, Count: t.Count, Start: end - windowSize, End: end})
				}
				top.Clear()
				return nil
			},
		}
	}).Name("MaxCount").UID("q5-max")
	output(b, rows, appendWindowCount)
}

// q7Top is the highest price of a window and the bids that have it.
type q7Top struct {
	Price int64
	Bids  []Bid
}

// q7Row is a row of q7: a bid with the highest price of its window.
type q7Row struct {
	Bid
	Start, End int64
}

// q7 finds the highest bids: per tumbling 10 s window, every bid whose
// price is the window's highest. The bids are keyed by their window's
// start; each key keeps the highest price and its bids until the
// window's time passes.
func q7(b *build, events stream.DataStream[Event]) {
	rows := stream.KeyedProcess(stream.KeyBy(bids(events), func(v Bid) int64 { return windowStart(v.DateTime) }),
		func() stream.KeyedProcessFunction[int64, Bid, q7Row] {
			var top state.ValueState[q7Top]
			return stream.KeyedProcessFunction[int64, Bid, q7Row]{
				Open: func(ctx *stream.KeyedRuntimeContext[int64]) error {
					var err error
					top, err = state.GetValueState(ctx.Backend(), state.ValueDescriptor[q7Top]{Name: "top"})
					return err
				},
				ProcessElement: func(v Bid, ctx *stream.KeyedContext[int64], _ stream.Collector[q7Row]) error {
					t, ok := top.Value()
					switch {
					case !ok:
						ctx.RegisterEventTimeTimer(windowStart(v.DateTime) + windowSize - 1)
						top.Update(q7Top{Price: v.Price, Bids: []Bid{v}})
					case v.Price > t.Price:
						top.Update(q7Top{Price: v.Price, Bids: []Bid{v}})
					case v.Price == t.Price:
						top.Update(q7Top{Price: v.Price, Bids: append(slices.Clip(t.Bids), v)})
					}
					return nil
				},
				OnTimer: func(ts int64, ctx *stream.KeyedContext[int64], out stream.Collector[q7Row]) error {
					t, ok := top.Value()
					if !ok {
						return nil
					}
					end := ts + 1
					for _, v := range t.Bids {
						out.Collect(q7Row{Bid: v, Start: end - windowSize, End: end})
					}
					top.Clear()
					return nil
				},
			}
		}).Name("HighestBids").UID("q7-max")
	output(b, rows, func(dst []byte, v q7Row) []byte {
		dst = appendBid(dst, v.Bid)
		dst = append(dst, ',')
		dst = appendInt(dst, v.Start)
		dst = append(dst, ',')
		return appendInt(dst, v.End)
	})
}

// q11 counts the bids of each bidder's sessions: a session ends after 10
// s without a bid. A session window of a bid at t is [t, t+10 s), and
// windows that overlap or touch merge, so the session's end is its last
// bid's time + 10 s.
func q11(b *build, events stream.DataStream[Event]) {
	bidders := stream.FlatMap(events, bidBidder).Name("Bidders")
	ws := stream.Window(stream.KeyBy(bidders, self), window.Assigner[window.TimeWindow](window.EventTimeSessionWindows(windowSize*time.Millisecond)))
	output(b, counts(ws).Name("SessionCounts").UID("q11-sessions"), appendWindowCount)
}
