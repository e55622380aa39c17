package nexmarktest

import (
	"encoding/csv"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// This file is the formats note's comparison rule: rows compared as a
// multiset, numbers as numbers rounded to 6 decimals, then unmatched rows
// paired when their strings are equal and their numbers within 1e-6
// absolute or 1e-9 relative.

// ReadCSV parses a query's CSV output into its header and rows.
func ReadCSV(t testing.TB, out string) (header []string, rows [][]string) {
	t.Helper()
	r := csv.NewReader(strings.NewReader(out))
	r.FieldsPerRecord = -1
	all, err := r.ReadAll()
	if err != nil {
		t.Fatalf("the output is not CSV: %v\n%s", err, head(out))
	}
	if len(all) == 0 {
		t.Fatalf("no header row")
	}
	return all[0], all[1:]
}

func head(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "..."
	}
	return s
}

// number parses a field as a number.
func number(f string) (float64, bool) {
	if f == "" || strings.ContainsAny(f, "xXnN_") { // no hex, NaN, Inf or 1_000
		return 0, false
	}
	v, err := strconv.ParseFloat(f, 64)
	return v, err == nil
}

// normalize is a row's key under the first pass of the rule.
func normalize(row []string) string {
	var b strings.Builder
	for i, f := range row {
		if i > 0 {
			b.WriteByte(0)
		}
		if v, ok := number(f); ok {
			b.WriteString(strconv.FormatFloat(math.Round(v*1e6)/1e6, 'f', 6, 64))
		} else {
			b.WriteString("s" + f)
		}
	}
	return b.String()
}

// close says whether two rows pair up in the second pass.
func closeRows(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, okx := number(a[i])
		y, oky := number(b[i])
		switch {
		case okx != oky:
			return false
		case !okx:
			if a[i] != b[i] {
				return false
			}
		case math.Abs(x-y) > 1e-6 && math.Abs(x-y) > 1e-9*math.Max(math.Abs(x), math.Abs(y)):
			return false
		}
	}
	return true
}

// Compare returns the rows of want missing from got (lost) and those of
// got not in want (extra), as multisets, by the formats note's rule.
func Compare(want, got [][]string) (lost, extra [][]string) {
	left := map[string][][]string{}
	for _, r := range want {
		k := normalize(r)
		left[k] = append(left[k], r)
	}
	for _, r := range got {
		k := normalize(r)
		if rs := left[k]; len(rs) > 0 {
			left[k] = rs[1:]
			continue
		}
		extra = append(extra, r)
	}
	for _, rs := range left {
		lost = append(lost, rs...)
	}
	// the second pass pairs what is left
	for i := 0; i < len(lost); i++ {
		if j := slices.IndexFunc(extra, func(r []string) bool { return closeRows(lost[i], r) }); j >= 0 {
			extra = slices.Delete(extra, j, j+1)
			lost = slices.Delete(lost, i, i+1)
			i--
		}
	}
	return lost, extra
}

// CheckRows fails t unless the headers are equal and got equals want by
// the rule, showing a few of the rows lost and extra.
func CheckRows(t testing.TB, what string, wantHeader, gotHeader []string, want, got [][]string) {
	t.Helper()
	if !slices.Equal(wantHeader, gotHeader) {
		t.Errorf("%s: header %q, want %q", what, gotHeader, wantHeader)
	}
	lost, extra := Compare(want, got)
	if len(lost) == 0 && len(extra) == 0 {
		return
	}
	msg := fmt.Sprintf("%s: lost %d extra %d of %d (%d rows out)", what, len(lost), len(extra), len(want), len(got))
	for _, r := range lost[:min(len(lost), 5)] {
		msg += "\n  lost  " + strings.Join(r, ",")
	}
	for _, r := range extra[:min(len(extra), 5)] {
		msg += "\n  extra " + strings.Join(r, ",")
	}
	t.Error(msg)
}
