package nexmark

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"sync"
	"unsafe"
)

// The suite's defaults (GeneratorConfig).
const (
	// DefaultRate is the events per second of event time.
	DefaultRate = 10000
	// DefaultBase is the dateTime of event 0: 2025-01-01T00:00:00Z.
	DefaultBase = 1735689600000

	firstPersonID  = 1000
	firstAuctionID = 1000
	firstCategory  = 10
	numCategories  = 5

	personProportion  = 1
	auctionProportion = 3
	totalProportion   = 50 // and 46 bids

	numActivePeople     = 1000
	numInFlightAuctions = 100
	personIDLead        = 10
	auctionIDLead       = 10
	hotRatio            = 100 // hot sellers, bidders and auctions are the first of each 100

	avgPersonBytes  = 200
	avgAuctionBytes = 500
	avgBidBytes     = 100

	numChannels = 10000
)

// Config says which events a Generator makes: event n depends on Seed,
// Rate, Base and n only.
type Config struct {
	// Seed selects the stream of events.
	Seed uint64
	// Rate is events per second of event time: event n has dateTime
	// Base + floor(n*1000/Rate). Zero means DefaultRate.
	Rate int64
	// Base is the dateTime of event 0 (epoch ms). Zero means DefaultBase.
	Base int64
}

func (c Config) withDefaults() Config {
	if c.Rate <= 0 {
		c.Rate = DefaultRate
	}
	if c.Base == 0 {
		c.Base = DefaultBase
	}
	return c
}

// Time returns the dateTime of event n.
func (c Config) Time(n int64) int64 {
	c = c.withDefaults()
	return c.time(n)
}

func (c Config) time(n int64) int64 {
	hi, lo := bits.Mul64(uint64(n), 1000)
	q, _ := bits.Div64(hi, lo, uint64(c.Rate)) // n*1000 may pass 2^63
	return c.Base + int64(q)
}

// KindOf returns the kind of event n: a person when n mod 50 is 0, an
// auction when it is 1 to 3, a bid otherwise.
func KindOf(n int64) Kind {
	switch r := n % totalProportion; {
	case r < personProportion:
		return KindPerson
	case r < personProportion+auctionProportion:
		return KindAuction
	}
	return KindBid
}

// lastPerson is the last person id (from 0) made at or before event n.
func lastPerson(n int64) int64 { return n / totalProportion }

// lastAuction is the last auction id (from 0) made at or before event n;
// -1 before the first.
func lastAuction(n int64) int64 {
	epoch, off := n/totalProportion, n%totalProportion
	switch {
	case off < personProportion:
		return (epoch-1)*auctionProportion + auctionProportion - 1
	case off >= personProportion+auctionProportion:
		return epoch*auctionProportion + auctionProportion - 1
	}
	return epoch*auctionProportion + off - personProportion
}

// Generator makes the events of a Config, each from a java.util.Random
// seeded with splitmix64(splitmix64(Seed) XOR n), so that any event can be
// made alone, in any order, by any number of generators. Names, item
// names, descriptions and filler are cut from pools of the suite's
// characters made once (as TPC-H's dbgen cuts its comments from a text
// pool), so making an event allocates nothing; a person's email and
// credit card are written into blocks of memory the generator never
// writes again. A Generator is used by one goroutine.
type Generator struct {
	cfg   Config
	seed  uint64 // splitmix64(cfg.Seed)
	arena []byte
}

// NewGenerator returns a generator of c's events.
func NewGenerator(c Config) *Generator {
	c = c.withDefaults()
	return &Generator{cfg: c, seed: splitmix64(c.Seed)}
}

// Config returns the generator's configuration, defaults filled in.
func (g *Generator) Config() Config { return g.cfg }

// Event makes event n into e.
func (g *Generator) Event(n int64, e *Event) {
	r := newJavaRand(splitmix64(g.seed ^ uint64(n)))
	t := g.cfg.time(n)
	switch KindOf(n) {
	case KindPerson:
		*e = Event{Kind: KindPerson, Person: g.person(n, &r, t)}
	case KindAuction:
		*e = Event{Kind: KindAuction, Auction: g.auction(n, &r, t)}
	default:
		*e = Event{Kind: KindBid, Bid: g.bid(n, &r, t)}
	}
}

var (
	usStates   = []string{"AZ", "CA", "ID", "OR", "WA", "WY"}
	usCities   = []string{"Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond", "Seattle", "Kent", "Cheyenne"}
	firstNames = []string{"Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter"}
	lastNames  = []string{"Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"}
	hotChannel = []string{"Google", "Facebook", "Baidu", "Apple"}
)

// stringTables are the strings made once.
type stringTables struct {
	names                 []string // full names: first*len(lastNames)+last
	channels, channelURLs []string // channel-K and its URL
	hotURLs               []string // the URLs of the hot channels
	// text and filler are pools the strings of events are cut from:
	// nextString's characters (a space in 13, else a-z) and nextExtra's
	// ('H' to 'z')
	text, filler string
}

// poolSize is the length of the text and filler pools.
const poolSize = 1 << 20

// tables are the strings made once: full names and the channels' names
// and URLs.
var tables = sync.OnceValue(func() *stringTables {
	t := &stringTables{}
	for _, f := range firstNames {
		for _, l := range lastNames {
			t.names = append(t.names, f+" "+l)
		}
	}
	url := func(r *javaRand) string {
		var b [8]byte
		return "https://www.nexmark.com/" + string(nextString(b[:0], r, 5, '_')) + "/" +
			string(nextString(b[:0], r, 5, '_')) + "/" + string(nextString(b[:0], r, 5, '_')) + "/item.htm?query=1"
	}
	for k := range numChannels {
		r := newJavaRand(splitmix64(uint64(k) ^ 0x6368616e6e656c)) // "channel"
		u := url(&r)
		if r.Intn(10) > 0 {
			id := int32(bits.Reverse32(uint32(k)))
			if id < 0 {
				id = -id // Math.abs; MinInt32 stays negative, as in Java
			}
			u += "&channel_id=" + strconv.Itoa(int(id))
		}
		t.channels = append(t.channels, "channel-"+strconv.Itoa(k))
		t.channelURLs = append(t.channelURLs, u)
	}
	for i := range hotChannel {
		r := newJavaRand(splitmix64(uint64(i) ^ 0x686f74)) // "hot"
		t.hotURLs = append(t.hotURLs, url(&r))
	}
	r := newJavaRand(0x706f6f6c) // "pool"
	text := make([]byte, 0, poolSize)
	for len(text) < poolSize {
		if r.Intn(13) == 0 {
			text = append(text, ' ')
		} else {
			text = append(text, byte('a'+r.Intn(26)))
		}
	}
	t.text = string(text)
	t.filler = string(nextExactString(make([]byte, 0, poolSize), &r, poolSize))
	return t
})

// nextString appends the suite's random string of up to maxLen
// characters: lowercase letters and, one in 13, special; a space at
// either end is trimmed, as Java's trim.
func nextString(dst []byte, r *javaRand, maxLen int32, special byte) []byte {
	n := 3 + r.Intn(maxLen-3)
	start := len(dst)
	for range n {
		if r.Intn(13) == 0 {
			dst = append(dst, special)
		} else {
			dst = append(dst, byte('a'+r.Intn(26)))
		}
	}
	if special != ' ' {
		return dst
	}
	s := dst[start:]
	i, j := 0, len(s)
	for i < j && s[i] == ' ' {
		i++
	}
	for j > i && s[j-1] == ' ' {
		j--
	}
	k := copy(s, s[i:j])
	return dst[:start+k]
}

// extraSize is the length of the filler that brings currentSize to avg
// on average: uniform within 20% of avg - currentSize.
func extraSize(r *javaRand, currentSize, avg int) int {
	if currentSize > avg {
		return 0
	}
	want := avg - currentSize
	delta := int(math.Floor(float64(want)*0.2 + 0.5))
	size := want - delta
	if delta != 0 {
		size += int(r.Intn(int32(2 * delta)))
	}
	return size
}

// nextExactString appends size characters of filler: 'a' plus a signed
// remainder mod 26 of Java ints, six from each, so they run from 'H' to
// 'z'.
func nextExactString(dst []byte, r *javaRand, size int) []byte {
	var rnd int32
	left := 0
	for range size {
		if left == 0 {
			rnd, left = r.Int(), 6
		}
		dst = append(dst, byte('a'+rnd%26))
		rnd /= 26
		left--
	}
	return dst
}

// extra cuts filler of extraSize from the pool.
func extra(tb *stringTables, r *javaRand, currentSize, avg int) string {
	n := extraSize(r, currentSize, avg)
	off := int(r.Intn(int32(len(tb.filler) - n)))
	return tb.filler[off : off+n]
}

// text cuts the suite's random string of up to maxLen characters from
// the pool: lowercase letters and, one in 13, a space; spaces at either
// end are trimmed, as Java's trim.
func text(tb *stringTables, r *javaRand, maxLen int32) string {
	n := 3 + r.Intn(maxLen-3)
	off := r.Intn(int32(len(tb.text)) - n)
	return strings.TrimSpace(tb.text[off : off+n])
}

// nextPrice is the suite's price: round(10^(6u) * 100) cents, 10^x as
// e^(x ln 10).
func nextPrice(r *javaRand) int64 {
	return int64(math.Floor(math.Exp(r.Float()*6*math.Ln10)*100 + 0.5))
}

// nextPersonID is a person among the last numActivePeople, or one of the
// personIDLead not made yet (from 0).
func nextPersonID(n int64, r *javaRand) int64 {
	people := lastPerson(n) + 1
	active := min(people, numActivePeople)
	return people - active + r.Longn(active+personIDLead)
}

// nextAuctionID is an auction among the last numInFlightAuctions, or one
// of the auctionIDLead not made yet (from 0).
func nextAuctionID(n int64, r *javaRand) int64 {
	last := lastAuction(n)
	first := max(last-numInFlightAuctions, 0)
	return first + r.Longn(last-first+1+auctionIDLead)
}

// text returns the arena's bytes from start as a string: they are never
// written again.
func (g *Generator) text(start int) string {
	if len(g.arena) == start {
		return ""
	}
	return unsafe.String(&g.arena[start], len(g.arena)-start)
}

// reserve makes room for n more bytes in the arena, starting a new block
// when the current one is full (the old block lives on in its strings).
func (g *Generator) reserve(n int) {
	if cap(g.arena)-len(g.arena) < n {
		g.arena = make([]byte, 0, max(arenaChunk, n))
	}
}

func (g *Generator) person(n int64, r *javaRand, t int64) Person {
	tb := tables()
	g.reserve(64)
	name := tb.names[r.Intn(int32(len(firstNames)))*int32(len(lastNames))+r.Intn(int32(len(lastNames)))]
	start := len(g.arena)
	g.arena = nextString(g.arena, r, 7, ' ')
	g.arena = append(g.arena, '@')
	g.arena = nextString(g.arena, r, 5, ' ')
	g.arena = append(g.arena, ".com"...)
	email := g.text(start)
	start = len(g.arena)
	for i := range 4 {
		if i > 0 {
			g.arena = append(g.arena, ' ')
		}
		v := r.Intn(10000)
		g.arena = append(g.arena, byte('0'+v/1000), byte('0'+v/100%10), byte('0'+v/10%10), byte('0'+v%10))
	}
	card := g.text(start)
	city := usCities[r.Intn(int32(len(usCities)))]
	state := usStates[r.Intn(int32(len(usStates)))]
	return Person{ID: firstPersonID + lastPerson(n), Name: name, EmailAddress: email, CreditCard: card,
		City: city, State: state, DateTime: t, Extra: extra(tb, r, 8+len(name)+len(email)+len(card)+len(city)+len(state), avgPersonBytes)}
}

func (g *Generator) auction(n int64, r *javaRand, t int64) Auction {
	tb := tables()
	var seller int64
	if r.Intn(4) > 0 { // a hot seller
		seller = lastPerson(n) / hotRatio * hotRatio
	} else {
		seller = nextPersonID(n, r)
	}
	category := firstCategory + int64(r.Intn(numCategories))
	initial := nextPrice(r)
	horizon := g.cfg.time(n+numInFlightAuctions*totalProportion/auctionProportion) - t
	expires := t + 1 + r.Longn(max(2*horizon, 1))
	item := text(tb, r, 20)
	desc := text(tb, r, 100)
	reserve := initial + nextPrice(r)
	return Auction{ID: firstAuctionID + lastAuction(n), ItemName: item, Description: desc, InitialBid: initial,
		Reserve: reserve, DateTime: t, Expires: expires, Seller: firstPersonID + seller, Category: category,
		Extra: extra(tb, r, 8+len(item)+len(desc)+5*8, avgAuctionBytes)}
}

func (g *Generator) bid(n int64, r *javaRand, t int64) Bid {
	tb := tables()
	var auction, bidder int64
	if r.Intn(2) > 0 { // a hot auction
		auction = lastAuction(n) / hotRatio * hotRatio
	} else {
		auction = nextAuctionID(n, r)
	}
	if r.Intn(4) > 0 { // a hot bidder, not a hot seller
		bidder = lastPerson(n)/hotRatio*hotRatio + 1
	} else {
		bidder = nextPersonID(n, r)
	}
	price := nextPrice(r)
	var channel, url string
	if r.Intn(2) == 0 {
		i := r.Intn(int32(len(hotChannel)))
		channel, url = hotChannel[i], tb.hotURLs[i]
	} else {
		k := r.Intn(numChannels)
		channel, url = tb.channels[k], tb.channelURLs[k]
	}
	return Bid{Auction: firstAuctionID + auction, Bidder: firstPersonID + bidder, Price: price,
		Channel: channel, URL: url, DateTime: t, Extra: extra(tb, r, 4*8, avgBidBytes)}
}

// String describes the configuration.
func (c Config) String() string {
	c = c.withDefaults()
	return fmt.Sprintf("seed %d, %d events/s from %d", c.Seed, c.Rate, c.Base)
}
