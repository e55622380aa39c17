package oracle

import (
	"bytes"
	"math/rand/v2"
	"slices"
)

// SortLines returns the '\n'-terminated lines of data in bytewise order, as
// `LC_ALL=C sort` prints them: a last line without '\n' gets one, and empty
// input gives nil.
func SortLines(data []byte) []byte {
	if len(data) == 0 {
		return nil
	}
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	slices.SortFunc(lines, bytes.Compare)
	var out []byte
	for _, l := range lines {
		out = append(out, l...)
		out = append(out, '\n')
	}
	return out
}

// NastyLines returns n '\n'-terminated lines of random bytes, the inputs a
// line sort gets wrong first: empty lines, duplicates, lines sharing a long
// prefix, CRs, NULs, bytes above 0x7f and invalid UTF-8. The same seed gives
// the same lines.
func NastyLines(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 5))
	alphabet := []byte("ab\r\x00\xff\xc3é Z~")
	var buf, prev []byte
	for range n {
		var line []byte
		switch r.IntN(6) {
		case 0: // empty
		case 1:
			line = prev // duplicate
		case 2:
			line = append([]byte("shared-prefix:"), noNewline(byte(r.IntN(256))))
		default:
			for range r.IntN(40) {
				c := alphabet[r.IntN(len(alphabet))]
				if r.IntN(4) == 0 {
					c = byte(r.IntN(256))
				}
				line = append(line, noNewline(c))
			}
		}
		buf = append(buf, line...)
		buf = append(buf, '\n')
		prev = line
	}
	return buf
}

// noNewline returns c, or 'n' for '\n'.
func noNewline(c byte) byte {
	if c == '\n' {
		return 'n'
	}
	return c
}
