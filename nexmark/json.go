package nexmark

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// This file is the JSON form of events, one object per line:
//
//	{"event_type":2,"person":null,"auction":null,"bid":{"auction":1000,...}}
//
// AppendJSON writes it compact with the keys in the order of the formats
// note; Decoder reads it back by hand, a byte at a time, without
// reflection: keys in any order, whitespace between tokens, string
// escapes (\\, \", \uXXXX with surrogate pairs) and unknown keys skipped.

// AppendJSON appends e's JSON line, without a line end, to dst. A
// KindBad event appends nothing.
func AppendJSON(dst []byte, e *Event) []byte {
	switch e.Kind {
	case KindPerson:
		p := &e.Person
		dst = append(dst, `{"event_type":0,"person":{"id":`...)
		dst = strconv.AppendInt(dst, p.ID, 10)
		dst = appendKeyString(dst, `,"name":`, p.Name)
		dst = appendKeyString(dst, `,"emailAddress":`, p.EmailAddress)
		dst = appendKeyString(dst, `,"creditCard":`, p.CreditCard)
		dst = appendKeyString(dst, `,"city":`, p.City)
		dst = appendKeyString(dst, `,"state":`, p.State)
		dst = appendKeyInt(dst, `,"dateTime":`, p.DateTime)
		dst = appendKeyString(dst, `,"extra":`, p.Extra)
		return append(dst, `},"auction":null,"bid":null}`...)
	case KindAuction:
		a := &e.Auction
		dst = append(dst, `{"event_type":1,"person":null,"auction":{"id":`...)
		dst = strconv.AppendInt(dst, a.ID, 10)
		dst = appendKeyString(dst, `,"itemName":`, a.ItemName)
		dst = appendKeyString(dst, `,"description":`, a.Description)
		dst = appendKeyInt(dst, `,"initialBid":`, a.InitialBid)
		dst = appendKeyInt(dst, `,"reserve":`, a.Reserve)
		dst = appendKeyInt(dst, `,"dateTime":`, a.DateTime)
		dst = appendKeyInt(dst, `,"expires":`, a.Expires)
		dst = appendKeyInt(dst, `,"seller":`, a.Seller)
		dst = appendKeyInt(dst, `,"category":`, a.Category)
		dst = appendKeyString(dst, `,"extra":`, a.Extra)
		return append(dst, `},"bid":null}`...)
	case KindBid:
		b := &e.Bid
		dst = append(dst, `{"event_type":2,"person":null,"auction":null,"bid":{"auction":`...)
		dst = strconv.AppendInt(dst, b.Auction, 10)
		dst = appendKeyInt(dst, `,"bidder":`, b.Bidder)
		dst = appendKeyInt(dst, `,"price":`, b.Price)
		dst = appendKeyString(dst, `,"channel":`, b.Channel)
		dst = appendKeyString(dst, `,"url":`, b.URL)
		dst = appendKeyInt(dst, `,"dateTime":`, b.DateTime)
		dst = appendKeyString(dst, `,"extra":`, b.Extra)
		return append(dst, `}}`...)
	}
	return dst
}

func appendKeyInt(dst []byte, key string, v int64) []byte {
	return strconv.AppendInt(append(dst, key...), v, 10)
}

func appendKeyString(dst []byte, key, s string) []byte {
	return appendString(append(dst, key...), s)
}

// needsEscape marks the bytes a JSON string cannot hold as they are: the
// quote, the backslash and the control characters.
var needsEscape = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string. Bytes from 0x80 on are
// copied as they are.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !needsEscape[c] {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// SyntaxError is a line that is not an event: Offset is the byte where
// the decoder stopped, from 0.
type SyntaxError struct {
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("nexmark: byte %d: %s", e.Offset+1, e.Msg)
}

// Decoder decodes JSON lines into events. The strings of a decoded event
// point into the line, or, for a string with escapes, into memory of the
// decoder's that is never written again; so the line must stay
// unchanged while the event is used. A Decoder is used by one goroutine.
type Decoder struct {
	arena []byte // unescaped strings; only appended to
}

// arenaChunk is the size of the decoder's blocks of unescaped strings.
const arenaChunk = 64 << 10

// Decode decodes one line into e. A line that is not a JSON object, or an
// event whose event_type does not match the one non-null object of
// person, auction and bid, or which lacks one of that object's fields,
// is a *SyntaxError.
func (d *Decoder) Decode(line string, e *Event) error {
	*e = Event{}
	s := scanner{s: line, d: d}
	typ, which := int64(-1), -1
	s.ws()
	if !s.eat('{') {
		return s.fail("want '{'")
	}
	for first := true; ; first = false {
		key, ok := s.key(first)
		if !ok {
			break
		}
		if !s.eventMember(key, e, &typ, &which) {
			return s.err
		}
	}
	if s.err != nil {
		return s.err
	}
	s.ws()
	if s.i != len(s.s) {
		return s.fail("text after the object")
	}
	switch {
	case typ < 0:
		return s.fail("no event_type")
	case which < 0:
		return s.fail("person, auction and bid are all null")
	case typ != int64(which):
		return s.fail(fmt.Sprintf("event_type %d holds a %s", typ, kindName(Kind(which))))
	}
	e.Kind = Kind(which)
	return nil
}

// eventMember reads the value of an event's member key: event_type into
// typ, an object into e, its kind into which.
func (s *scanner) eventMember(key string, e *Event, typ *int64, which *int) bool {
	switch key {
	case "event_type":
		v, ok := s.int()
		*typ = v
		return ok
	case "person", "auction", "bid":
		if s.null() {
			if *which >= 0 && kindName(Kind(*which)) == key {
				*which = -1 // a later null wins, as in encoding/json
				*e = Event{}
			}
			return true
		}
		if *which >= 0 {
			s.fail("more than one of person, auction and bid")
			return false
		}
		switch key {
		case "person":
			*which = int(KindPerson)
			return s.person(&e.Person)
		case "auction":
			*which = int(KindAuction)
			return s.auction(&e.Auction)
		}
		*which = int(KindBid)
		return s.bid(&e.Bid)
	}
	return s.skip(0)
}

func kindName(k Kind) string {
	switch k {
	case KindPerson:
		return "person"
	case KindAuction:
		return "auction"
	case KindBid:
		return "bid"
	}
	return "bad record"
}

// scanner reads one line; the first error stops it (err).
type scanner struct {
	s   string
	i   int
	d   *Decoder
	err error
}

func (s *scanner) fail(msg string) error {
	if s.err == nil {
		s.err = &SyntaxError{Offset: s.i, Msg: msg}
	}
	return s.err
}

func (s *scanner) ws() {
	for s.i < len(s.s) {
		switch s.s[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) eat(c byte) bool {
	if s.i < len(s.s) && s.s[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *scanner) null() bool {
	if len(s.s)-s.i >= 4 && s.s[s.i:s.i+4] == "null" {
		s.i += 4
		return true
	}
	return false
}

// int reads a JSON integer that fits an int64.
func (s *scanner) int() (int64, bool) {
	start := s.i
	neg := s.eat('-')
	if s.i >= len(s.s) || s.s[s.i] < '0' || s.s[s.i] > '9' {
		s.fail("want an integer")
		return 0, false
	}
	var v uint64
	if s.s[s.i] == '0' {
		s.i++
	} else {
		for s.i < len(s.s) && s.s[s.i] >= '0' && s.s[s.i] <= '9' {
			d := uint64(s.s[s.i] - '0')
			if v > (1<<63-d)/10 { // v*10+d > 1<<63
				s.i = start
				s.fail("integer out of range")
				return 0, false
			}
			v = v*10 + d
			s.i++
		}
	}
	if s.i < len(s.s) {
		switch s.s[s.i] {
		case '.', 'e', 'E':
			s.fail("want an integer, not a fraction or an exponent")
			return 0, false
		}
	}
	if neg {
		return -int64(v), true // -(1<<63) wraps to itself
	}
	if v > 1<<63-1 {
		s.i = start
		s.fail("integer out of range")
		return 0, false
	}
	return int64(v), true
}

// str reads a JSON string. Without escapes it is a part of the line;
// with them it is unescaped into the decoder's arena. The closing quote
// and a backslash are found with strings.IndexByte, and control
// characters eight bytes at a time.
func (s *scanner) str() (string, bool) {
	if !s.eat('"') {
		s.fail("want a string")
		return "", false
	}
	start := s.i
	q := strings.IndexByte(s.s[start:], '"')
	if q < 0 {
		q = len(s.s) - start
	}
	seg := s.s[start : start+q]
	if b := strings.IndexByte(seg, '\\'); b >= 0 {
		seg = seg[:b]
	}
	if c := controlAt(seg); c >= 0 {
		s.i = start + c
		s.fail("control character in a string")
		return "", false
	}
	s.i = start + len(seg)
	if s.i == len(s.s) {
		s.fail("unterminated string")
		return "", false
	}
	if s.s[s.i] == '\\' {
		return s.escaped(start)
	}
	s.i++
	return seg, true
}

// controlAt returns the index of the first byte below 0x20 in seg, or -1.
func controlAt(seg string) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(seg); i += 8 {
		x := binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(seg[i:]), 8))
		// a byte below 0x20 sets its high bit in x - 0x20..20 where x's is clear
		if (x-0x20*ones)&^x&highs != 0 {
			break
		}
	}
	for ; i < len(seg); i++ {
		if seg[i] < 0x20 {
			return i
		}
	}
	return -1
}

// escaped finishes a string from start whose first escape is at s.i.
func (s *scanner) escaped(start int) (string, bool) {
	d := s.d
	// an unescaped string is never longer than its JSON form
	if rest := len(s.s) - start; cap(d.arena)-len(d.arena) < rest {
		d.arena = make([]byte, 0, max(arenaChunk, rest))
	}
	from := len(d.arena)
	b := append(d.arena, s.s[start:s.i]...)
	for s.i < len(s.s) {
		c := s.s[s.i]
		if c != '\\' {
			// copy the run up to the next backslash or quote
			rest := s.s[s.i:]
			q := strings.IndexByte(rest, '"')
			if q < 0 {
				q = len(rest)
			}
			run := rest[:q]
			if k := strings.IndexByte(run, '\\'); k >= 0 {
				run = run[:k]
			}
			if k := controlAt(run); k >= 0 {
				s.i += k
				s.fail("control character in a string")
				return "", false
			}
			b = append(b, run...)
			s.i += len(run)
			if s.i < len(s.s) && s.s[s.i] == '"' {
				s.i++
				d.arena = b
				if len(b) == from {
					return "", true
				}
				return unsafe.String(&b[from], len(b)-from), true
			}
			continue
		}
		if s.i+1 >= len(s.s) {
			break
		}
		s.i += 2
		switch e := s.s[s.i-1]; e {
		case '"', '\\', '/':
			b = append(b, e)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, ok := s.hex4()
			if !ok {
				return "", false
			}
			if r >= 0xd800 && r < 0xdc00 { // a high surrogate: a low one may follow
				if len(s.s)-s.i >= 6 && s.s[s.i] == '\\' && s.s[s.i+1] == 'u' {
					save := s.i
					s.i += 2
					lo, ok := s.hex4()
					if !ok {
						return "", false
					}
					if lo >= 0xdc00 && lo < 0xe000 {
						r = 0x10000 + (r-0xd800)<<10 + (lo - 0xdc00)
					} else {
						s.i = save
						r = utf8.RuneError
					}
				} else {
					r = utf8.RuneError
				}
			} else if r >= 0xdc00 && r < 0xe000 {
				r = utf8.RuneError
			}
			b = utf8.AppendRune(b, r)
		default:
			s.i -= 2
			s.fail("bad escape in a string")
			return "", false
		}
	}
	s.fail("unterminated string")
	return "", false
}

func (s *scanner) hex4() (rune, bool) {
	if len(s.s)-s.i < 4 {
		s.fail("short \\u escape")
		return 0, false
	}
	var r rune
	for k := range 4 {
		c := s.s[s.i+k]
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			s.fail("bad \\u escape")
			return 0, false
		}
	}
	s.i += 4
	return r, true
}

// skip skips any JSON value (an unknown key's).
func (s *scanner) skip(depth int) bool {
	if depth > 64 {
		s.fail("nested too deep")
		return false
	}
	if s.i >= len(s.s) {
		s.fail("want a value")
		return false
	}
	switch c := s.s[s.i]; {
	case c == '"':
		_, ok := s.str()
		return ok
	case c == '{' || c == '[':
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		s.i++
		s.ws()
		if s.eat(end) {
			return true
		}
		for {
			if c == '{' {
				if _, ok := s.str(); !ok {
					return false
				}
				s.ws()
				if !s.eat(':') {
					s.fail("want ':'")
					return false
				}
				s.ws()
			}
			if !s.skip(depth + 1) {
				return false
			}
			s.ws()
			if s.eat(end) {
				return true
			}
			if !s.eat(',') {
				s.fail("want ',' or the end of a list or object")
				return false
			}
			s.ws()
		}
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	}
	for _, lit := range [...]string{"null", "true", "false"} {
		if len(s.s)-s.i >= len(lit) && s.s[s.i:s.i+len(lit)] == lit {
			s.i += len(lit)
			return true
		}
	}
	s.fail("want a value")
	return false
}

// number skips a JSON number.
func (s *scanner) number() bool {
	s.eat('-')
	digits := func() bool {
		n := 0
		for s.i < len(s.s) && s.s[s.i] >= '0' && s.s[s.i] <= '9' {
			s.i++
			n++
		}
		return n > 0
	}
	if s.eat('0') {
		// a leading zero stands alone
	} else if !digits() {
		s.fail("want a number")
		return false
	}
	if s.eat('.') && !digits() {
		s.fail("want digits after '.'")
		return false
	}
	if s.eat('e') || s.eat('E') {
		if !s.eat('+') {
			s.eat('-')
		}
		if !digits() {
			s.fail("want digits in the exponent")
			return false
		}
	}
	return true
}

// key reads the next member's key of an object whose '{' was read (first)
// or whose last value was, and the ':' after it: false at the object's
// '}', or on an error (s.err).
func (s *scanner) key(first bool) (string, bool) {
	s.ws()
	if s.eat('}') {
		return "", false
	}
	if !first {
		if !s.eat(',') {
			s.fail("want ',' or '}'")
			return "", false
		}
		s.ws()
	}
	key, ok := s.str()
	if !ok {
		return "", false
	}
	s.ws()
	if !s.eat(':') {
		s.fail("want ':'")
		return "", false
	}
	s.ws()
	return key, true
}

// maxFields is the most fields of an object (an auction's).
const maxFields = 10

// fieldSet is the fields of one kind of object: what it is called in
// errors and its fields' names, in the order of the formats note.
type fieldSet struct {
	what  string
	names []string
}

var (
	personFields  = fieldSet{"a person", []string{"id", "name", "emailAddress", "creditCard", "city", "state", "dateTime", "extra"}}
	auctionFields = fieldSet{"an auction", []string{"id", "itemName", "description", "initialBid", "reserve", "dateTime", "expires", "seller", "category", "extra"}}
	bidFields     = fieldSet{"a bid", []string{"auction", "bidder", "price", "channel", "url", "dateTime", "extra"}}
)

// dests are where an object's fields go: field i is an integer into
// ints[i] or a string into strs[i].
type dests struct {
	ints [maxFields]*int64
	strs [maxFields]*string
}

// object reads an object of fs into d. Unknown keys are skipped; every
// field must be seen. Keys are looked up in the note's order first, so
// an object written in that order finds each key at once.
func (s *scanner) object(fs *fieldSet, d *dests) bool {
	if !s.eat('{') {
		s.fail("want " + fs.what + " object or null")
		return false
	}
	var seen uint32
	next := 0 // the field expected next
	for first := true; ; first = false {
		key, ok := s.key(first)
		if !ok {
			break
		}
		i := next
		if i >= len(fs.names) || fs.names[i] != key {
			if i = slices.Index(fs.names, key); i < 0 {
				if !s.skip(1) {
					return false
				}
				continue
			}
		}
		next = i + 1
		seen |= 1 << i
		if p := d.ints[i]; p != nil {
			*p, ok = s.int()
		} else {
			*d.strs[i], ok = s.str()
		}
		if !ok {
			return false
		}
	}
	if s.err != nil {
		return false
	}
	if want := uint32(1)<<len(fs.names) - 1; seen != want {
		s.fail(fmt.Sprintf("%s without %s", fs.what, fs.names[bits.TrailingZeros32(want&^seen)]))
		return false
	}
	return true
}

func (s *scanner) person(p *Person) bool {
	return s.object(&personFields, &dests{
		ints: [maxFields]*int64{0: &p.ID, 6: &p.DateTime},
		strs: [maxFields]*string{1: &p.Name, 2: &p.EmailAddress, 3: &p.CreditCard, 4: &p.City, 5: &p.State, 7: &p.Extra},
	})
}

func (s *scanner) auction(a *Auction) bool {
	return s.object(&auctionFields, &dests{
		ints: [maxFields]*int64{0: &a.ID, 3: &a.InitialBid, 4: &a.Reserve, 5: &a.DateTime, 6: &a.Expires, 7: &a.Seller, 8: &a.Category},
		strs: [maxFields]*string{1: &a.ItemName, 2: &a.Description, 9: &a.Extra},
	})
}

func (s *scanner) bid(b *Bid) bool {
	return s.object(&bidFields, &dests{
		ints: [maxFields]*int64{0: &b.Auction, 1: &b.Bidder, 2: &b.Price, 5: &b.DateTime},
		strs: [maxFields]*string{3: &b.Channel, 4: &b.URL, 6: &b.Extra},
	})
}
