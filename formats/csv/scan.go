package csv

import (
	"bytes"
	"errors"
)

// The scanner cuts records out of a buffer without copying: a field is a span of
// the buffer, or of the scanner's scratch when it had to be unescaped ("" inside
// quotes, or \r\n inside quotes, which becomes \n as in encoding/csv).

var (
	errBareQuote    = errors.New(`bare " in non-quoted field`)
	errQuote        = errors.New(`extraneous or missing " in quoted field`)
	errUnterminated = errors.New(`quoted field not terminated at end of input`)
)

const quote = '"'

// status is what scanner.next found.
type status uint8

const (
	statusRecord   status = iota // a record: fields are set
	statusSkip                   // a blank or comment line
	statusNeedMore               // the record continues past the data
	statusEOF                    // no data left
)

// span is one field of the current record.
type span struct {
	start, end int
	scratch    bool // the bytes are in scanner.scratch, not in the data
	quoted     bool // the field was quoted (so it is never NULL)
}

type scanner struct {
	delim   byte
	comment byte // 0: none
	trim    bool
	special [256]bool // bytes that end an unquoted run: delim, '\n', quote
	fields  []span
	scratch []byte
	lines   int // newlines in the last record or skipped line
}

func newScanner(o *Options) *scanner {
	s := &scanner{delim: byte(o.Delimiter), comment: byte(o.Comment), trim: o.TrimSpace}
	s.special[s.delim], s.special['\n'], s.special[quote] = true, true, true
	return s
}

// field returns the bytes of field i of the last record, given the data the
// record was scanned from.
func (s *scanner) field(data []byte, i int) []byte {
	f := s.fields[i]
	if f.scratch {
		return s.scratch[f.start:f.end]
	}
	return data[f.start:f.end]
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' }

// blank reports whether TrimSpace trims c: a space or a tab that is not the
// delimiter.
func (s *scanner) blank(c byte) bool { return c == ' ' || c == '\t' && s.delim != '\t' }

// next scans one record at the start of data. atEOF says no data follows data;
// otherwise a record that may continue past data gives statusNeedMore, and the
// caller calls again with more data from the same start.
func (s *scanner) next(data []byte, atEOF bool) (n int, st status, err error) {
	s.fields, s.scratch, s.lines = s.fields[:0], s.scratch[:0], 0
	if len(data) == 0 {
		return 0, statusEOF, nil
	}
	switch c := data[0]; {
	case c == '\n':
		s.lines = 1
		return 1, statusSkip, nil
	case c == '\r' && len(data) == 1 && atEOF:
		return 1, statusSkip, nil
	case c == '\r' && len(data) == 1:
		return 0, statusNeedMore, nil
	case c == '\r' && data[1] == '\n':
		s.lines = 1
		return 2, statusSkip, nil
	case s.comment != 0 && c == s.comment:
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			if !atEOF {
				return 0, statusNeedMore, nil
			}
			return len(data), statusSkip, nil
		}
		s.lines = 1
		return i + 1, statusSkip, nil
	}
	p := 0
	for {
		q := p
		if s.trim {
			for q < len(data) && s.blank(data[q]) {
				q++
			}
		}
		if q < len(data) && data[q] == quote {
			end, done, st, err := s.quoted(data, q, atEOF)
			if err != nil || st == statusNeedMore || done {
				return end, st, err
			}
			p = end
			continue
		}
		i := p
		for i < len(data) && !s.special[data[i]] {
			i++
		}
		if i == len(data) && !atEOF {
			return 0, statusNeedMore, nil
		}
		last := i == len(data) || data[i] == '\n'
		if !last && data[i] == quote {
			return 0, statusRecord, errBareQuote
		}
		end := i
		if last && end > p && data[end-1] == '\r' {
			end--
		}
		start := p
		if s.trim {
			for start < end && s.blank(data[start]) {
				start++
			}
			for end > start && s.blank(data[end-1]) {
				end--
			}
		}
		s.fields = append(s.fields, span{start: start, end: end})
		if last {
			if i < len(data) {
				s.lines++
				i++
			}
			return i, statusRecord, nil
		}
		p = i + 1
	}
}

// quoted scans the quoted field whose opening quote is at q. It returns where the
// next field starts, or the end of the record when done.
func (s *scanner) quoted(data []byte, q int, atEOF bool) (next int, done bool, st status, err error) {
	q++
	start := q
	unescaped := false
	sstart := len(s.scratch)
	for {
		i := bytes.IndexByte(data[q:], quote)
		if i < 0 {
			if atEOF {
				return 0, true, statusRecord, errUnterminated
			}
			return 0, true, statusNeedMore, nil
		}
		seg := data[q : q+i]
		s.lines += bytes.Count(seg, []byte{'\n'})
		q += i + 1
		if q == len(data) && !atEOF {
			return 0, true, statusNeedMore, nil
		}
		if q < len(data) && data[q] == quote { // "" is one quote
			if !unescaped {
				unescaped = true
				s.scratch = append(s.scratch, data[start:q]...)
			} else {
				s.scratch = append(s.scratch, seg...)
				s.scratch = append(s.scratch, quote)
			}
			q++
			continue
		}
		f := span{start: start, end: q - 1, quoted: true}
		if unescaped {
			s.scratch = append(s.scratch, seg...)
			f = span{start: sstart, end: len(s.scratch), scratch: true, quoted: true}
		}
		s.fields = append(s.fields, s.crlf(data, f))
		break
	}
	if s.trim {
		for q < len(data) && s.blank(data[q]) {
			q++
		}
	}
	switch {
	case q == len(data):
		if !atEOF {
			return 0, true, statusNeedMore, nil
		}
		return q, true, statusRecord, nil
	case data[q] == s.delim:
		return q + 1, false, statusRecord, nil
	case data[q] == '\n':
		s.lines++
		return q + 1, true, statusRecord, nil
	case data[q] == '\r' && q+1 < len(data) && data[q+1] == '\n':
		s.lines++
		return q + 2, true, statusRecord, nil
	case data[q] == '\r' && q+1 == len(data):
		if !atEOF {
			return 0, true, statusNeedMore, nil
		}
		return q + 1, true, statusRecord, nil
	}
	return 0, true, statusRecord, errQuote
}

// crlf rewrites \r\n inside quoted field f as \n, as encoding/csv does.
func (s *scanner) crlf(data []byte, f span) span {
	b := data[f.start:f.end]
	if f.scratch {
		b = s.scratch[f.start:f.end]
	}
	i := bytes.Index(b, []byte{'\r', '\n'})
	if i < 0 {
		return f
	}
	start := len(s.scratch)
	for i >= 0 {
		s.scratch = append(s.scratch, b[:i]...)
		b = b[i+1:]
		i = bytes.Index(b, []byte{'\r', '\n'})
	}
	s.scratch = append(s.scratch, b...)
	return span{start: start, end: len(s.scratch), scratch: true, quoted: true}
}
