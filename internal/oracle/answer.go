package oracle

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
)

// ReadAnswer reads an answer file written by DuckDB (the TPC-H answers):
// CSV, a header row, then the rows. A query answering one row of one NULL
// (Q17 over data where nothing qualifies) is an empty line, which
// encoding/csv skips: it comes back as a row of one empty field.
func ReadAnswer(path string) ([][]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	recs, err := ParseCSV(b)
	if err != nil {
		return nil, fmt.Errorf("oracle: %s: %w", path, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("oracle: %s: no header row", path)
	}
	if len(recs) == 1 && len(recs[0]) == 1 && bytes.HasSuffix(b, []byte("\n\n")) {
		recs = append(recs, []string{""})
	}
	return recs, nil
}

// ParseCSV parses CSV with rows of any width.
func ParseCSV(b []byte) ([][]string, error) {
	r := csv.NewReader(bytes.NewReader(b))
	r.FieldsPerRecord = -1
	return r.ReadAll()
}

// CompareAnswer compares got with want, header rows first, row by row in
// order: numbers within a relative 1e-9, everything else exactly. It
// returns nil when they match, or the differences (the first 10).
func CompareAnswer(got, want [][]string) error {
	if len(got) == 0 || len(want) == 0 {
		return fmt.Errorf("oracle: %d rows against %d: no header row", len(got), len(want))
	}
	var diffs []string
	if !slices.Equal(got[0], want[0]) {
		diffs = append(diffs, fmt.Sprintf("columns %q, want %q", got[0], want[0]))
	}
	g, w := got[1:], want[1:]
	if len(g) != len(w) {
		return fmt.Errorf("oracle: %d rows, want %d:\ngot  %q\nwant %q", len(g), len(w), g, w)
	}
	for i := range w {
		if len(g[i]) != len(w[i]) {
			diffs = append(diffs, fmt.Sprintf("row %d: %d fields, want %d", i, len(g[i]), len(w[i])))
			continue
		}
		for j := range w[i] {
			if !FieldEqual(g[i][j], w[i][j]) {
				diffs = append(diffs, fmt.Sprintf("row %d column %s: got %q, want %q", i, want[0][min(j, len(want[0])-1)], g[i][j], w[i][j]))
			}
		}
	}
	if len(diffs) == 0 {
		return nil
	}
	if len(diffs) > 10 {
		diffs = append(diffs[:10], fmt.Sprintf("and %d more", len(diffs)-10))
	}
	return fmt.Errorf("oracle: %s", joinLines(diffs))
}

// FieldEqual compares one field: numbers within a relative 1e-9 (shares
// such as Q8's are smaller than any absolute tolerance worth having),
// everything else exactly.
func FieldEqual(got, want string) bool {
	g, gerr := strconv.ParseFloat(got, 64)
	w, werr := strconv.ParseFloat(want, 64)
	if gerr != nil || werr != nil {
		return got == want
	}
	return math.Abs(g-w) <= 1e-9*math.Abs(w)
}

func joinLines(s []string) string {
	var b bytes.Buffer
	for i, l := range s {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(l)
	}
	return b.String()
}
