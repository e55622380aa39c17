package nexmark

import (
	"fmt"
	"math"
)

// Kind is what an Event holds: a person, an auction or a bid (the
// event_type of the JSON form), or a line that did not decode.
type Kind uint8

// The kinds of events. The numbers are the JSON event_type's.
const (
	KindPerson  Kind = 0
	KindAuction Kind = 1
	KindBid     Kind = 2
	// KindBad is a line that did not decode, kept under SkipBad to go to
	// the dead-letter output; Event.Bad says where and why.
	KindBad Kind = 255
)

// Person is a user of the auction site. DateTime is epoch milliseconds.
type Person struct {
	ID           int64
	Name         string
	EmailAddress string
	CreditCard   string
	City         string
	State        string
	DateTime     int64
	Extra        string
}

// Auction is an item put up for auction. Prices are in cents, times in
// epoch milliseconds; Expires is when the auction closes.
type Auction struct {
	ID          int64
	ItemName    string
	Description string
	InitialBid  int64
	Reserve     int64
	DateTime    int64
	Expires     int64
	Seller      int64
	Category    int64
	Extra       string
}

// Bid is a bid on an auction. Price is in cents, DateTime epoch
// milliseconds.
type Bid struct {
	Auction  int64
	Bidder   int64
	Price    int64
	Channel  string
	URL      string
	DateTime int64
	Extra    string
}

// Event is one line of the event stream: Kind says which of Person,
// Auction and Bid it holds; the other two are zero. Events are values
// (no pointers but the strings), so batches of them are copied, never
// allocated one by one.
type Event struct {
	Kind    Kind
	Person  Person
	Auction Auction
	Bid     Bid
	// Bad is set for KindBad only.
	Bad *BadRecord
}

// BadRecord is a line that did not decode: where it came from, the line
// and the decoder's error. Split is the file and Line the line number
// from 1; or, with Line 0, Split names the record's place alone (a Kafka
// record's topic, partition and offset).
type BadRecord struct {
	Split string
	Line  int64
	Text  string
	Err   error
}

// Where names the record's place: "FILE line N", or Split alone.
func (b *BadRecord) Where() string {
	if b.Line > 0 {
		return fmt.Sprintf("%s line %d", b.Split, b.Line)
	}
	return b.Split
}

// NoTime is the time of an event without one (KindBad): weir's mark of a
// record without timestamp.
const NoTime = math.MinInt64

// Time returns the event's time, its dateTime in epoch milliseconds
// (NoTime for KindBad).
func (e *Event) Time() int64 {
	switch e.Kind {
	case KindPerson:
		return e.Person.DateTime
	case KindAuction:
		return e.Auction.DateTime
	case KindBid:
		return e.Bid.DateTime
	}
	return NoTime
}
