package nexmark

import (
	"bufio"
	"bytes"
	"context"
	"math"
	"strings"
	"testing"
)

// TestJavaRand: the LCG draws what java.util.Random does. The values are
// what jshell printed for new Random(42): nextInt() -1170105035, then
// nextInt(10) 3; nextLong() and nextDouble() of fresh generators; and
// new Random(0).nextInt(16) 11.
func TestJavaRand(t *testing.T) {
	r := newJavaRand(42)
	if v := r.Int(); v != -1170105035 {
		t.Errorf("nextInt() = %d, want -1170105035", v)
	}
	if v := r.Intn(10); v != 3 {
		t.Errorf("nextInt(10) = %d, want 3", v)
	}
	r = newJavaRand(42)
	if v := r.Long(); v != -5025562857975149833 {
		t.Errorf("nextLong() = %d, want -5025562857975149833", v)
	}
	r = newJavaRand(42)
	if v := r.Float(); v != 0.7275636800328681 {
		t.Errorf("nextDouble() = %v, want 0.7275636800328681", v)
	}
	r = newJavaRand(0)
	if v := r.Intn(16); v != 11 {
		t.Errorf("new Random(0).nextInt(16) = %d, want 11", v)
	}
}

// TestGeneratorRules checks every event of a run against the rules of the
// formats note.
func TestGeneratorRules(t *testing.T) {
	c := Config{Seed: 1}
	n := int64(200000)
	events := makeEvents(c, n)
	var (
		persons, auctions, bidCount           int
		hotSeller, hotBidder, hotAuction, hot int
		states                                = map[string]int{}
		categories                            = map[int64]int{}
		extraBytes                            = map[Kind]int{}
		minPrice, maxPrice                    = int64(math.MaxInt64), int64(0)
	)
	for i, e := range events {
		k := int64(i)
		if want := DefaultBase + k/10; e.Time() != want {
			t.Fatalf("event %d: dateTime %d, want %d", k, e.Time(), want)
		}
		if e.Kind != KindOf(k) {
			t.Fatalf("event %d: kind %d, want %d", k, e.Kind, KindOf(k))
		}
		lastP := 1000 + k/50
		lastA := 1000 + 3*(k/50) + 2
		check := func(price int64) {
			if price < 100 || price > 100_000_000 {
				t.Fatalf("event %d: price %d outside 100..10^8", k, price)
			}
			minPrice, maxPrice = min(minPrice, price), max(maxPrice, price)
		}
		// a person id among the last 1000 persons or the 10 to come
		person := func(id int64) {
			if id < max(1000, lastP-999) || id > lastP+10 {
				t.Fatalf("event %d: person %d outside [%d, %d]", k, id, max(1000, lastP-999), lastP+10)
			}
		}
		switch e.Kind {
		case KindPerson:
			persons++
			p := e.Person
			if p.ID != lastP {
				t.Fatalf("event %d: person id %d, want %d", k, p.ID, lastP)
			}
			states[p.State]++
			extraBytes[KindPerson] += len(p.Extra)
			if !strings.Contains(p.EmailAddress, "@") || len(p.CreditCard) != 19 || !strings.Contains(p.Name, " ") {
				t.Fatalf("event %d: person %+v", k, p)
			}
		case KindAuction:
			auctions++
			a := e.Auction
			if want := 1000 + 3*(k/50) + k%50 - 1; a.ID != want {
				t.Fatalf("event %d: auction id %d, want %d", k, a.ID, want)
			}
			if a.Seller == 1000+(k/50)/100*100 {
				hotSeller++
			} else {
				person(a.Seller)
			}
			categories[a.Category]++
			check(a.InitialBid)
			check(a.Reserve - a.InitialBid)
			horizon := c.Time(k+1666) - c.Time(k)
			if a.Expires < a.DateTime+1 || a.Expires > a.DateTime+2*horizon {
				t.Fatalf("event %d: expires %d, want within [%d, %d]", k, a.Expires, a.DateTime+1, a.DateTime+2*horizon)
			}
			extraBytes[KindAuction] += len(a.Extra)
		case KindBid:
			bidCount++
			b := e.Bid
			if b.Auction == 1000+(lastA-1000)/100*100 {
				hotAuction++
			} else if b.Auction < max(1000, lastA-100) || b.Auction > lastA+10 {
				t.Fatalf("event %d: auction %d outside [%d, %d]", k, b.Auction, max(1000, lastA-100), lastA+10)
			}
			if b.Bidder == 1000+(k/50)/100*100+1 {
				hotBidder++
			} else {
				person(b.Bidder)
			}
			check(b.Price)
			switch b.Channel {
			case "Google", "Facebook", "Baidu", "Apple":
				hot++
			default:
				if !strings.HasPrefix(b.Channel, "channel-") {
					t.Fatalf("event %d: channel %q", k, b.Channel)
				}
			}
			if !strings.HasPrefix(b.URL, "https://www.nexmark.com/") {
				t.Fatalf("event %d: url %q", k, b.URL)
			}
			for _, ch := range []byte(b.Extra) {
				if ch < 'H' || ch > 'z' {
					t.Fatalf("event %d: extra %q holds %q", k, b.Extra, ch)
				}
			}
			extraBytes[KindBid] += len(b.Extra)
		}
	}
	if persons*50 != int(n) || auctions*50 != 3*int(n) || bidCount*50 != 46*int(n) {
		t.Errorf("%d persons, %d auctions, %d bids: want 1:3:46", persons, auctions, bidCount)
	}
	near := func(what string, got, want, tol float64) {
		if math.Abs(got-want) > tol {
			t.Errorf("%s: %.3f, want %.3f ± %.3f", what, got, want, tol)
		}
	}
	near("hot sellers", float64(hotSeller)/float64(auctions), 0.75, 0.03)
	near("hot bidders", float64(hotBidder)/float64(bidCount), 0.75, 0.01)
	near("hot auctions", float64(hotAuction)/float64(bidCount), 0.5, 0.01)
	near("hot channels", float64(hot)/float64(bidCount), 0.5, 0.01)
	near("bid size", float64(extraBytes[KindBid])/float64(bidCount)+32, 100, 2)
	near("auction size", float64(extraBytes[KindAuction])/float64(auctions), 500-40-8-11-51, 15)
	for _, s := range usStates {
		near("state "+s, float64(states[s])/float64(persons), 1.0/6, 0.03)
	}
	for cat := int64(10); cat <= 14; cat++ {
		near("category", float64(categories[cat])/float64(auctions), 0.2, 0.03)
	}
	if minPrice > 200 || maxPrice < 50_000_000 {
		t.Errorf("prices from %d to %d: want nearly 100 to 10^8", minPrice, maxPrice)
	}
}

// TestGeneratorRepeats: an event depends on the seed and its number
// only, and another seed gives other events.
func TestGeneratorRepeats(t *testing.T) {
	a, b := NewGenerator(Config{Seed: 4}), NewGenerator(Config{Seed: 4})
	other := NewGenerator(Config{Seed: 5})
	var x, y, z Event
	same := 0
	for _, n := range []int64{5000, 3, 4999, 0, 123456789, 49, 50} {
		a.Event(n, &x)
		b.Event(n, &y)
		other.Event(n, &z)
		if x != y {
			t.Fatalf("event %d differs: %+v and %+v", n, x, y)
		}
		if x == z {
			same++
		}
	}
	if same > 0 {
		t.Errorf("%d events the same under another seed", same)
	}
}

// TestWriteDisorder: a delayed file holds every event once; when a line is
// read, every earlier one has dateTime at most this one's plus the bound;
// about a tenth of the events move; an ordered file is in order.
func TestWriteDisorder(t *testing.T) {
	c := Config{Seed: 8, Rate: 1000}
	n := int64(50000)
	for _, disorder := range []int64{0, 2000} {
		var buf bytes.Buffer
		if err := WriteJSON(context.Background(), &buf, WriteOptions{Config: c, Events: n, Disorder: disorder}); err != nil {
			t.Fatal(err)
		}
		want := makeEvents(c, n)
		seen := map[Event]int{}
		for _, e := range want {
			seen[e]++
		}
		var d Decoder
		var e Event
		maxSeen, lines, behind := int64(math.MinInt64), int64(0), 0
		sc := bufio.NewScanner(&buf)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if err := d.Decode(sc.Text(), &e); err != nil {
				t.Fatal(err)
			}
			if e.Time() < maxSeen {
				behind++
			}
			if maxSeen > e.Time()+disorder {
				t.Fatalf("line %d: dateTime %d, after one of %d (bound %d)", lines+1, e.Time(), maxSeen, disorder)
			}
			maxSeen = max(maxSeen, e.Time())
			seen[e]--
			lines++
		}
		for e, k := range seen {
			if k != 0 {
				t.Fatalf("event %+v seen %d times too few", e, k)
			}
		}
		if lines != n {
			t.Fatalf("%d lines, want %d", lines, n)
		}
		if disorder == 0 && behind != 0 || disorder > 0 && (behind < int(n)/20 || behind > int(n)/2) {
			t.Errorf("disorder %d: %d of %d lines behind an earlier one", disorder, behind, n)
		}
	}
}

// TestGeneratorSourceSplits: the splits of the in-process source together
// make every event once, whatever the parallelism.
func TestGeneratorSourceSplits(t *testing.T) {
	for _, n := range []int64{0 + 1, 999, 1000, 5432, 20000} {
		for _, p := range []int64{1, 2, 3, 7} {
			s := &genSource{count: n}
			total := int64(0)
			for r := range p {
				total += s.splitLen(r, p)
			}
			if total != n {
				t.Errorf("%d events over %d splits: %d", n, p, total)
			}
		}
	}
}

// makeEvents returns events 0 to n-1 of c.
func makeEvents(c Config, n int64) []Event {
	g := NewGenerator(c)
	out := make([]Event, n)
	for i := range n {
		g.Event(i, &out[i])
	}
	return out
}
