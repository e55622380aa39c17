package csv

import (
	stdcsv "encoding/csv"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fuzzOptions are the option sets FuzzCSV picks from.
var fuzzOptions = []Options{
	{NoHeader: true},
	{NoHeader: true, Comment: '#'},
	{NoHeader: true, Delimiter: ';', TrimSpace: true},
	{NoHeader: true, Delimiter: '\t', Comment: '#', TrimSpace: true},
}

// FuzzCSV checks on arbitrary bytes that parsing never panics, that splitting a
// valid file at any size gives the same records, that encoding/csv agrees
// whenever both accept the input (without TrimSpace, which encoding/csv has only
// on the left; a leading byte-order mark, which encoding/csv keeps, removed),
// and that parse∘write∘parse is the identity (but for \r\n inside a string,
// which reads back as \n).
func FuzzCSV(f *testing.F) {
	for _, data := range parseCases {
		f.Add([]byte(data), uint8(3), uint8(0))
	}
	f.Add([]byte("a,\"b\nc\",d\n\"\"\"\",,\r\n"), uint8(1), uint8(0))
	f.Add([]byte("#c\n a ; \" b\" ;c\n"), uint8(5), uint8(3))
	f.Add([]byte("\"x"), uint8(0), uint8(1))
	f.Add([]byte(bom+"a,b,c\n\"\xef\xbb\xbf\",1,2\n"), uint8(2), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, split, opt uint8) {
		o := fuzzOptions[int(opt)%len(fuzzOptions)]
		p := writeFile(t, string(data))
		o.ChunkSize = 16
		whole, err := readAll(t, mustOpen[Three](t, p, o))
		if err != nil {
			return
		}
		so := o
		so.SplitSize, so.ChunkSize = int64(split%16+1), 7
		parts, err := readAll(t, mustOpen[Three](t, p, so))
		if err != nil || !slices.Equal(parts, whole) {
			t.Fatalf("split %d: %v\n got %q\nwant %q", so.SplitSize, err, parts, whole)
		}
		if !o.TrimSpace {
			r := stdcsv.NewReader(strings.NewReader(strings.TrimPrefix(string(data), bom)))
			r.FieldsPerRecord, r.Comment = 3, o.Comment
			if recs, err := r.ReadAll(); err == nil {
				if want := threes(recs); !slices.Equal(whole, want) {
					t.Fatalf("encoding/csv differs:\n got %q\nwant %q", whole, want)
				}
			}
		}
		out := filepath.Join(t.TempDir(), "out.csv")
		writeAll(t, NewSink[Three](out, o), whole)
		again, err := readAll(t, mustOpen[Three](t, out, o))
		// a string with \r\n inside reads back with \n (a known limit)
		crlf := func(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }
		want := make([]Three, len(whole))
		for i, r := range whole {
			want[i] = Three{crlf(r.A), crlf(r.B), crlf(r.C)}
		}
		if err != nil || !slices.Equal(again, want) {
			t.Fatalf("round trip: %v\n got %q\nwant %q", err, again, want)
		}
	})
}
