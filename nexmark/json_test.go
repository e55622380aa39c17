package nexmark

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// jsonEvent is an event as encoding/json reads the formats note's lines:
// the independent decoder the hand-written one is checked against.
type jsonEvent struct {
	EventType *int64 `json:"event_type"`
	Person    *struct {
		ID           int64  `json:"id"`
		Name         string `json:"name"`
		EmailAddress string `json:"emailAddress"`
		CreditCard   string `json:"creditCard"`
		City         string `json:"city"`
		State        string `json:"state"`
		DateTime     int64  `json:"dateTime"`
		Extra        string `json:"extra"`
	} `json:"person"`
	Auction *struct {
		ID          int64  `json:"id"`
		ItemName    string `json:"itemName"`
		Description string `json:"description"`
		InitialBid  int64  `json:"initialBid"`
		Reserve     int64  `json:"reserve"`
		DateTime    int64  `json:"dateTime"`
		Expires     int64  `json:"expires"`
		Seller      int64  `json:"seller"`
		Category    int64  `json:"category"`
		Extra       string `json:"extra"`
	} `json:"auction"`
	Bid *struct {
		Auction  int64  `json:"auction"`
		Bidder   int64  `json:"bidder"`
		Price    int64  `json:"price"`
		Channel  string `json:"channel"`
		URL      string `json:"url"`
		DateTime int64  `json:"dateTime"`
		Extra    string `json:"extra"`
	} `json:"bid"`
}

// event converts what encoding/json read into an Event.
func (j *jsonEvent) event() Event {
	switch {
	case j.Person != nil:
		p := j.Person
		return Event{Kind: KindPerson, Person: Person{p.ID, p.Name, p.EmailAddress, p.CreditCard, p.City, p.State, p.DateTime, p.Extra}}
	case j.Auction != nil:
		a := j.Auction
		return Event{Kind: KindAuction, Auction: Auction{a.ID, a.ItemName, a.Description, a.InitialBid, a.Reserve, a.DateTime, a.Expires, a.Seller, a.Category, a.Extra}}
	case j.Bid != nil:
		b := j.Bid
		return Event{Kind: KindBid, Bid: Bid{b.Auction, b.Bidder, b.Price, b.Channel, b.URL, b.DateTime, b.Extra}}
	}
	return Event{}
}

// TestJSONExample decodes the formats note's three example lines.
func TestJSONExample(t *testing.T) {
	var d Decoder
	var e Event
	lines := []string{
		`{"event_type":0,"person":{"id":1000,"name":"Sarah Walton","emailAddress":"wh@befx.com","creditCard":"9699 3072 0494 1196","city":"Bend","state":"AZ","dateTime":1735689600000,"extra":"XXIXO[ocfgpj"},"auction":null,"bid":null}`,
		`{"event_type":1,"person":null,"auction":{"id":1000,"itemName":"ytohvmzg","description":"pjix kheqalbqktiimol","initialBid":219127,"reserve":5914320,"dateTime":1735689600000,"expires":1735689600031,"seller":1000,"category":13,"extra":"SWWKPWLHOKL_"},"bid":null}`,
		`{"event_type":2,"person":null,"auction":null,"bid":{"auction":1000,"bidder":1001,"price":492742,"channel":"Apple","url":"https://www.nexmark.com/y_k/dpz/mbl/item.htm?query=1","dateTime":1735689600000,"extra":"apo\\dsg"}}`,
	}
	want := []Event{
		{Kind: KindPerson, Person: Person{1000, "Sarah Walton", "wh@befx.com", "9699 3072 0494 1196", "Bend", "AZ", 1735689600000, "XXIXO[ocfgpj"}},
		{Kind: KindAuction, Auction: Auction{1000, "ytohvmzg", "pjix kheqalbqktiimol", 219127, 5914320, 1735689600000, 1735689600031, 1000, 13, "SWWKPWLHOKL_"}},
		{Kind: KindBid, Bid: Bid{1000, 1001, 492742, "Apple", "https://www.nexmark.com/y_k/dpz/mbl/item.htm?query=1", 1735689600000, `apo\dsg`}},
	}
	for i, l := range lines {
		if err := d.Decode(l, &e); err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		if e != want[i] {
			t.Errorf("line %d: %+v, want %+v", i, e, want[i])
		}
		if got := string(AppendJSON(nil, &e)); got != l {
			t.Errorf("line %d encodes as\n%s\nwant\n%s", i, got, l)
		}
	}
}

// TestJSONGenerated: every generated event encodes to what encoding/json
// reads back as the same event, and decodes back to itself.
func TestJSONGenerated(t *testing.T) {
	g := NewGenerator(Config{Seed: 9})
	var d Decoder
	var e, back Event
	escapes := 0
	for n := range int64(5000) {
		g.Event(n, &e)
		line := AppendJSON(nil, &e)
		var j jsonEvent
		if err := json.Unmarshal(line, &j); err != nil {
			t.Fatalf("event %d: encoding/json: %v\n%s", n, err, line)
		}
		if j.EventType == nil || Kind(*j.EventType) != e.Kind || j.event() != e {
			t.Fatalf("event %d: encoding/json read %+v, want %+v", n, j.event(), e)
		}
		if err := d.Decode(string(line), &back); err != nil || back != e {
			t.Fatalf("event %d: decoded %+v, %v; want %+v", n, back, err, e)
		}
		if strings.Contains(string(line), `\\`) {
			escapes++
		}
	}
	if escapes == 0 {
		t.Fatal("no generated line has an escape")
	}
}

// TestJSONErrors: what the decoder refuses, and where it says it stopped.
func TestJSONErrors(t *testing.T) {
	bid := `"bid":{"auction":1,"bidder":2,"price":3,"channel":"c","url":"u","dateTime":4,"extra":"x"}`
	for _, c := range []struct{ line, msg string }{
		{``, "byte 1: want '{'"},
		{`{"event_type":2,"person":null,"auction":null,` + bid, "want ',' or '}'"},
		{`{"event_type":2,` + bid + `} x`, "text after the object"},
		{`{"event_type":1,` + bid + `}`, "event_type 1 holds a bid"},
		{`{` + bid + `}`, "no event_type"},
		{`{"event_type":2,"bid":null}`, "all null"},
		{`{"event_type":2,"bid":{"auction":1.5}}`, "not a fraction"},
		{`{"event_type":2,"bid":{"auction":1}}`, "a bid without bidder"},
		{`{"event_type":2,"bid":{"auction":99999999999999999999}}`, "out of range"},
		{`{"event_type":2,"bid":{"auction":"1"}}`, "want an integer"},
		{`{"event_type":2,"bid":{"channel":"a` + "\x01" + `"}}`, "control character"},
		{`{"event_type":2,"bid":{"channel":"a\q"}}`, "bad escape"},
		{`{"event_type":2,"bid":{"channel":"\u12"}}`, "\\u escape"},
		{`{"event_type":2,"bid":{"channel":"abc`, "unterminated string"},
		{`{"event_type":2,"person":{"id":1},` + bid + `}`, "a person without name"},
	} {
		var d Decoder
		var e Event
		err := d.Decode(c.line, &e)
		var se *SyntaxError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), c.msg) || !strings.HasPrefix(err.Error(), "nexmark: byte ") {
			t.Errorf("%s: %v, want a syntax error saying %q", c.line, err, c.msg)
		}
	}
}

// TestJSONLenient: whitespace, keys in any order, escapes and unknown keys.
func TestJSONLenient(t *testing.T) {
	line := " { \"bid\" : {\"extra\":\"a\\\"b\\u00e9\\ud83d\\ude00\\/\",\"dateTime\":-4 ,\"url\":\"u\",\"channel\":\"\",\"price\":0,\"bidder\":-9223372036854775808,\"auction\":1,\"more\":[1,{\"x\":null},-2.5e+3,true]}," +
		"\"person\":null, \"note\": \"x\", \"event_type\" : 2 }\r\n"
	var d Decoder
	var e Event
	if err := d.Decode(line, &e); err != nil {
		t.Fatal(err)
	}
	want := Bid{Auction: 1, Bidder: -9223372036854775808, Price: 0, URL: "u", DateTime: -4, Extra: "a\"bé😀/"}
	if e.Kind != KindBid || e.Bid != want {
		t.Fatalf("got %+v, want %+v", e.Bid, want)
	}
}

// FuzzJSON checks the codec against encoding/json: an event built from
// the fuzzer's values round-trips through AppendJSON and both decoders;
// and any line the hand-written decoder accepts, encoding/json accepts
// with the same event.
func FuzzJSON(f *testing.F) {
	f.Add(int64(1000), int64(1001), int64(5), "Apple", `a\b"c`, "extra", uint8(2), `{"event_type":0}`)
	f.Add(int64(-1), int64(0), int64(1<<62), "", "\x00\x1f\u2028", "é", uint8(1), `{"event_type":2,"bid":{"auction":1,"bidder":2,"price":3,"channel":"\u00e9","url":"u","dateTime":4,"extra":"x"},"person":null}`)
	f.Add(int64(7), int64(8), int64(9), "x", "y", "z", uint8(0), ` {"person":{"id":1,"name":"n","emailAddress":"e","creditCard":"c","city":"c","state":"s","dateTime":5,"extra":"\ud800"},"event_type":0}`)
	f.Fuzz(func(t *testing.T, a, b, c int64, s1, s2, s3 string, kind uint8, line string) {
		var e Event
		switch kind % 3 {
		case 0:
			e = Event{Kind: KindPerson, Person: Person{a, s1, s2, s3, s1, s2, b, s3}}
		case 1:
			e = Event{Kind: KindAuction, Auction: Auction{a, s1, s2, b, c, a + b, c, b, a, s3}}
		default:
			e = Event{Kind: KindBid, Bid: Bid{a, b, c, s1, s2, a, s3}}
		}
		enc := AppendJSON(nil, &e)
		var d Decoder
		var back Event
		if err := d.Decode(string(enc), &back); err != nil || back != e {
			t.Fatalf("%s: decoded %+v, %v; want %+v", enc, back, err, e)
		}
		if utf8.ValidString(s1) && utf8.ValidString(s2) && utf8.ValidString(s3) {
			var j jsonEvent
			if err := json.Unmarshal(enc, &j); err != nil || j.event() != e {
				t.Fatalf("%s: encoding/json read %+v, %v; want %+v", enc, j.event(), err, e)
			}
		}
		// any line: the decoder does not panic; what it accepts,
		// encoding/json reads the same
		if err := d.Decode(line, &back); err == nil && utf8.ValidString(line) && !caseClash(line) {
			var j jsonEvent
			if err := json.Unmarshal([]byte(line), &j); err != nil {
				t.Fatalf("%q: accepted, but encoding/json says %v", line, err)
			}
			if j.event() != back || j.EventType == nil || Kind(*j.EventType) != back.Kind {
				t.Fatalf("%q: decoded %+v, encoding/json %+v", line, back, j.event())
			}
		}
	})
}

// caseClash says whether line has a key that differs from a known one
// only in case: encoding/json matches keys regardless of case, the
// decoder exactly.
func caseClash(line string) bool {
	known := append(append(append([]string{"event_type", "person", "auction", "bid"}, personFields.names...), auctionFields.names...), bidFields.names...)
	dec := json.NewDecoder(strings.NewReader(line))
	var stack []bool // per open container: is it an object
	expectKey := false
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				stack = append(stack, v == '{')
				expectKey = v == '{'
				continue
			default:
				stack = stack[:len(stack)-1]
			}
		case string:
			if expectKey {
				for _, k := range known {
					if v != k && strings.EqualFold(v, k) {
						return true
					}
				}
				expectKey = false
				continue
			}
		}
		expectKey = len(stack) > 0 && stack[len(stack)-1]
	}
}

// TestNoAllocations: making an event and decoding a line allocate nothing
// in the steady state (an escaped string takes arena space, a block per
// 64 KiB).
func TestNoAllocations(t *testing.T) {
	g := NewGenerator(Config{Seed: 1})
	var e Event
	n := int64(0)
	if a := testing.AllocsPerRun(1000, func() { g.Event(n, &e); n++ }); a > 0.1 {
		t.Errorf("Generator.Event: %.2f allocations per event", a)
	}
	line := string(AppendJSON(nil, &Event{Kind: KindBid, Bid: Bid{Auction: 1, Bidder: 2, Price: 3, Channel: "c", URL: "u", DateTime: 4, Extra: "abc"}}))
	var d Decoder
	if a := testing.AllocsPerRun(1000, func() { _ = d.Decode(line, &e) }); a != 0 {
		t.Errorf("Decoder.Decode: %.2f allocations per line", a)
	}
}

func BenchmarkDecode(b *testing.B) {
	g := NewGenerator(Config{Seed: 1})
	lines := make([]string, 1000)
	var e Event
	size := 0
	for i := range lines {
		g.Event(int64(i), &e)
		lines[i] = string(AppendJSON(nil, &e))
		size += len(lines[i])
	}
	var d Decoder
	b.SetBytes(int64(size / len(lines)))
	for i := 0; b.Loop(); i++ {
		if err := d.Decode(lines[i%len(lines)], &e); err != nil {
			b.Fatal(err)
		}
	}
}
