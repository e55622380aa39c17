package nexmark

import (
	"github.com/weirdata/weir/stream"
)

// The queries that look at one event at a time: q0, q1, q2 and q14. Each
// is one FlatMap chained to the source.

// queryBuilders build each query on the event stream and send its rows to
// the output.
var queryBuilders = map[string]func(b *build, events stream.DataStream[Event]){
	"q0":  q0,
	"q1":  q1,
	"q2":  q2,
	"q3":  q3,
	"q4":  q4,
	"q5":  q5,
	"q7":  q7,
	"q8":  q8,
	"q9":  q9,
	"q11": q11,
	"q14": q14,
}

// bids is the stream of bids.
func bids(events stream.DataStream[Event]) stream.DataStream[Bid] {
	return stream.FlatMap(events, func(e Event, emit func(Bid)) {
		if e.Kind == KindBid {
			emit(e.Bid)
		}
	}).Name("Bids")
}

// bidRows is the shape of the queries that look at one bid at a time: a
// FlatMap named name, chained to the source, that turns a bid into the row
// keep returns when it says so, and the rows output as enc writes them.
// keep takes and returns values, never pointers: a pointer given to a
// function value escapes, and the event with it, to the heap per bid.
func bidRows[R any](b *build, events stream.DataStream[Event], name string, keep func(v Bid) (R, bool), enc func([]byte, R) []byte) {
	rows := stream.FlatMap(events, func(e Event, emit func(R)) {
		if e.Kind != KindBid {
			return
		}
		if r, ok := keep(e.Bid); ok {
			emit(r)
		}
	}).Name(name)
	output(b, rows, enc)
}

// appendBid appends auction,bidder,price,dateTime,extra; price as it is.
func appendBid(b []byte, v Bid) []byte {
	return appendBidPrice(b, v, appendInt)
}

// appendBidPrice is appendBid with the price written by price.
func appendBidPrice(b []byte, v Bid, price func([]byte, int64) []byte) []byte {
	b = appendInt(b, v.Auction)
	b = append(b, ',')
	b = appendInt(b, v.Bidder)
	b = append(b, ',')
	b = price(b, v.Price)
	b = append(b, ',')
	b = appendInt(b, v.DateTime)
	b = append(b, ',')
	return appendField(b, v.Extra)
}

// q0 is the pass-through: every bid.
func q0(b *build, events stream.DataStream[Event]) {
	output(b, bids(events), appendBid)
}

// q1 converts every bid's price to euros: price × 0.908, exact to 3
// decimals (the Price of its rows is in thousandths).
func q1(b *build, events stream.DataStream[Event]) {
	bidRows(b, events, "CurrencyConversion", func(v Bid) (Bid, bool) {
		v.Price *= 908
		return v, true
	}, func(dst []byte, v Bid) []byte { return appendBidPrice(dst, v, appendMillis) })
}

// q2Row is a row of q2.
type q2Row struct{ Auction, Price int64 }

// q2 selects the bids on auctions whose id is a multiple of 123.
func q2(b *build, events stream.DataStream[Event]) {
	bidRows(b, events, "Selection", func(v Bid) (q2Row, bool) {
		return q2Row{Auction: v.Auction, Price: v.Price}, v.Auction%123 == 0
	}, func(dst []byte, v q2Row) []byte {
		dst = appendInt(dst, v.Auction)
		dst = append(dst, ',')
		return appendInt(dst, v.Price)
	})
}

// q14Row is a row of q14: the price in thousandths.
type q14Row struct {
	Auction, Bidder, Price int64
	TimeType               string
	DateTime               int64
	Extra                  string
	Count                  int64
}

// q14 keeps the bids whose price × 0.908 is strictly between 1,000,000
// and 50,000,000, with the converted price, whether the bid came by day
// or night (UTC hour 8-18 dayTime, 0-6 and 20-23 nightTime, otherwise
// otherTime) and the number of 'c's in extra.
func q14(b *build, events stream.DataStream[Event]) {
	bidRows(b, events, "Filter", func(v Bid) (q14Row, bool) {
		price := v.Price * 908
		if price <= 1_000_000_000 || price >= 50_000_000_000 {
			return q14Row{}, false
		}
		return q14Row{Auction: v.Auction, Bidder: v.Bidder, Price: price, TimeType: timeType(v.DateTime),
			DateTime: v.DateTime, Extra: v.Extra, Count: countC(v.Extra)}, true
	}, func(dst []byte, v q14Row) []byte {
		dst = appendInt(dst, v.Auction)
		dst = append(dst, ',')
		dst = appendInt(dst, v.Bidder)
		dst = append(dst, ',')
		dst = appendMillis(dst, v.Price)
		dst = append(dst, ',')
		dst = append(dst, v.TimeType...)
		dst = append(dst, ',')
		dst = appendInt(dst, v.DateTime)
		dst = append(dst, ',')
		dst = appendField(dst, v.Extra)
		dst = append(dst, ',')
		return appendInt(dst, v.Count)
	})
}

// timeType names the part of the day of t (epoch ms) by its UTC hour.
func timeType(t int64) string {
	h := floorMod(t, 86_400_000) / 3_600_000
	switch {
	case h >= 8 && h <= 18:
		return "dayTime"
	case h <= 6 || h >= 20:
		return "nightTime"
	}
	return "otherTime"
}

func countC(s string) int64 {
	var n int64
	for i := range len(s) {
		if s[i] == 'c' {
			n++
		}
	}
	return n
}

// floorMod is t mod m with the sign of m, as Java's Math.floorMod.
func floorMod(t, m int64) int64 {
	r := t % m
	if r < 0 {
		r += m
	}
	return r
}
