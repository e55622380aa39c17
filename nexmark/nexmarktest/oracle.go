package nexmarktest

import (
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"time"

	"github.com/weirdata/weir/nexmark"
)

// Oracle returns the header and the rows query q must give over events:
// each query computed naively with maps and sorts, straight from the
// definitions of the formats note, sharing no code with the stream
// programs. The rows are CSV fields; their order means nothing. It
// panics on a query it does not know.
func Oracle(q string, events []nexmark.Event) (header []string, rows [][]string) {
	d := strconv.FormatInt
	i := func(v int64) string { return d(v, 10) }
	euro := func(cents int64) string { return new(big.Rat).SetFrac64(cents*908, 1000).FloatString(3) }
	var bidList []nexmark.Bid
	var persons []nexmark.Person
	var auctions []nexmark.Auction
	for _, e := range events {
		switch e.Kind {
		case nexmark.KindBid:
			bidList = append(bidList, e.Bid)
		case nexmark.KindPerson:
			persons = append(persons, e.Person)
		case nexmark.KindAuction:
			auctions = append(auctions, e.Auction)
		}
	}
	bidsOf := map[int64][]nexmark.Bid{}
	for _, b := range bidList {
		bidsOf[b.Auction] = append(bidsOf[b.Auction], b)
	}
	tumble := func(t int64) int64 { // window start, aligned to epoch 0
		s := t / 10000 * 10000
		if s > t {
			s -= 10000
		}
		return s
	}
	switch q {
	case "q0":
		header = []string{"auction", "bidder", "price", "dateTime", "extra"}
		for _, b := range bidList {
			rows = append(rows, []string{i(b.Auction), i(b.Bidder), i(b.Price), i(b.DateTime), b.Extra})
		}
	case "q1":
		header = []string{"auction", "bidder", "price", "dateTime", "extra"}
		for _, b := range bidList {
			rows = append(rows, []string{i(b.Auction), i(b.Bidder), euro(b.Price), i(b.DateTime), b.Extra})
		}
	case "q2":
		header = []string{"auction", "price"}
		for _, b := range bidList {
			if b.Auction%123 == 0 {
				rows = append(rows, []string{i(b.Auction), i(b.Price)})
			}
		}
	case "q3":
		header = []string{"name", "city", "state", "id"}
		byID := map[int64]nexmark.Person{}
		for _, p := range persons {
			if p.State == "OR" || p.State == "ID" || p.State == "CA" {
				byID[p.ID] = p
			}
		}
		for _, a := range auctions {
			if p, ok := byID[a.Seller]; ok && a.Category == 10 {
				rows = append(rows, []string{p.Name, p.City, p.State, i(a.ID)})
			}
		}
	case "q4":
		header = []string{"category", "avg_final"}
		sum, n := map[int64]int64{}, map[int64]int64{}
		for _, a := range auctions {
			best, found := int64(0), false
			for _, b := range bidsOf[a.ID] {
				if b.Auction == a.ID && b.DateTime >= a.DateTime && b.DateTime <= a.Expires && (!found || b.Price > best) {
					best, found = b.Price, true
				}
			}
			if found {
				sum[a.Category] += best
				n[a.Category]++
			}
		}
		for c, s := range sum {
			rows = append(rows, []string{i(c), strconv.FormatFloat(float64(s)/float64(n[c]), 'g', -1, 64)})
		}
	case "q5":
		header = []string{"auction", "num", "window_start", "window_end"}
		type key struct{ start, auction int64 }
		count := map[key]int64{}
		for _, b := range bidList {
			first := b.DateTime - b.DateTime%2000
			for k := range int64(5) {
				count[key{first - 2000*k, b.Auction}]++
			}
		}
		most := map[int64]int64{}
		for k, c := range count {
			most[k.start] = max(most[k.start], c)
		}
		for k, c := range count {
			if c == most[k.start] {
				rows = append(rows, []string{i(k.auction), i(c), i(k.start), i(k.start + 10000)})
			}
		}
	case "q7":
		header = []string{"auction", "bidder", "price", "dateTime", "extra", "window_start", "window_end"}
		most := map[int64]int64{}
		for _, b := range bidList {
			s := tumble(b.DateTime)
			if p, ok := most[s]; !ok || b.Price > p {
				most[s] = b.Price
			}
		}
		for _, b := range bidList {
			if s := tumble(b.DateTime); b.Price == most[s] {
				rows = append(rows, []string{i(b.Auction), i(b.Bidder), i(b.Price), i(b.DateTime), b.Extra, i(s), i(s + 10000)})
			}
		}
	case "q8":
		header = []string{"id", "name", "window_start", "window_end"}
		type key struct{ seller, start int64 }
		opened := map[key]bool{}
		for _, a := range auctions {
			opened[key{a.Seller, tumble(a.DateTime)}] = true
		}
		for _, p := range persons {
			if s := tumble(p.DateTime); opened[key{p.ID, s}] {
				rows = append(rows, []string{i(p.ID), p.Name, i(s), i(s + 10000)})
			}
		}
	case "q9":
		header = []string{"id", "itemName", "description", "initialBid", "reserve", "dateTime", "expires", "seller", "category", "extra",
			"auction", "bidder", "price", "bid_dateTime", "bid_extra"}
		for _, a := range auctions {
			var best *nexmark.Bid
			for k := range bidsOf[a.ID] {
				b := &bidsOf[a.ID][k]
				if b.Auction != a.ID || b.DateTime < a.DateTime || b.DateTime > a.Expires {
					continue
				}
				if best == nil || b.Price > best.Price || b.Price == best.Price && b.DateTime < best.DateTime {
					best = b
				}
			}
			if best != nil {
				rows = append(rows, []string{i(a.ID), a.ItemName, a.Description, i(a.InitialBid), i(a.Reserve), i(a.DateTime), i(a.Expires),
					i(a.Seller), i(a.Category), a.Extra, i(best.Auction), i(best.Bidder), i(best.Price), i(best.DateTime), best.Extra})
			}
		}
	case "q11":
		header = []string{"bidder", "bid_count", "starttime", "endtime"}
		times := map[int64][]int64{}
		for _, b := range bidList {
			times[b.Bidder] = append(times[b.Bidder], b.DateTime)
		}
		for bidder, ts := range times {
			sort.Slice(ts, func(a, b int) bool { return ts[a] < ts[b] })
			start, n := ts[0], int64(1)
			for k := 1; k <= len(ts); k++ {
				if k == len(ts) || ts[k]-ts[k-1] > 10000 {
					rows = append(rows, []string{i(bidder), i(n), i(start), i(ts[k-1] + 10000)})
					if k < len(ts) {
						start, n = ts[k], 0
					}
				}
				n++
			}
		}
	case "q14":
		header = []string{"auction", "bidder", "price", "bidTimeType", "dateTime", "extra", "c_counts"}
		for _, b := range bidList {
			euros := new(big.Rat).SetFrac64(b.Price*908, 1000)
			if euros.Cmp(big.NewRat(1000000, 1)) <= 0 || euros.Cmp(big.NewRat(50000000, 1)) >= 0 {
				continue
			}
			h := time.UnixMilli(b.DateTime).UTC().Hour()
			kind := "otherTime"
			if h >= 8 && h <= 18 {
				kind = "dayTime"
			} else if h <= 6 || h >= 20 {
				kind = "nightTime"
			}
			c := 0
			for _, r := range b.Extra {
				if r == 'c' {
					c++
				}
			}
			rows = append(rows, []string{i(b.Auction), i(b.Bidder), euros.FloatString(3), kind, i(b.DateTime), b.Extra, strconv.Itoa(c)})
		}
	default:
		panic(fmt.Sprintf("nexmarktest: no query %s", q))
	}
	return header, rows
}
