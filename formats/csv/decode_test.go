package csv

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// numberCases are texts the fast number parsers must read as strconv does,
// or leave to it.
var numberCases = []string{
	"0", "-0", "+0", "7", "-7", "+7", "007", "123456789012345678", "-123456789012345678",
	"1234567890123456789", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
	"127", "128", "-128", "-129", "32767", "32768", "2147483647", "2147483648", "-2147483649",
	"", "-", "+", "1-", "1 ", " 1", "0x10", "1_000", "1e3", "1.5", ".5", "5.", ".", "-.5", "+.5e-3",
	"1e22", "1e23", "1e-22", "1e-23", "9007199254740992", "9007199254740993", "9007199254740991.5",
	"0.1", "0.3", "123.456e7", "1E5", "1e+05", "1e0005", "1e00005", "4.9e-324", "1e309", "1.7976931348623157e308",
	"NaN", "inf", "-Infinity", "0x1p3", "12x.5", "1e", "1e+", "--1", "1..2", "0000000000000000000001",
	"12345678901234567890", "0.00000000000000000000001",
}

// checkNumber compares atoi and atof on s with strconv: where they read s
// they give strconv's value, and they read nothing strconv refuses.
func checkNumber(t *testing.T, s string) {
	t.Helper()
	for _, bits := range []int{8, 16, 32, 64} {
		want, err := strconv.ParseInt(s, 10, bits)
		if got, ok := atoi([]byte(s), bits); ok && (err != nil || got != want) {
			t.Errorf("atoi(%q, %d) = %d, strconv: %d, %v", s, bits, got, want, err)
		}
	}
	want, err := strconv.ParseFloat(s, 64)
	got, ok := atof([]byte(s))
	if ok && (err != nil || math.Float64bits(got) != math.Float64bits(want)) {
		t.Errorf("atof(%q) = %v, strconv: %v, %v", s, got, want, err)
	}
	if ok && !isDecimal([]byte(s)) {
		t.Errorf("atof read %q, which is no decimal number", s)
	}
}

// TestFastNumbers checks the fast paths against strconv on edge cases and on
// random decimals; the common forms must take them.
func TestFastNumbers(t *testing.T) {
	for _, s := range numberCases {
		checkNumber(t, s)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		var s string
		switch r.IntN(4) {
		case 0:
			s = strconv.FormatInt(r.Int64()>>r.IntN(63), 10)
		case 1:
			s = strconv.FormatFloat(r.NormFloat64()*math.Pow(10, float64(r.IntN(30)-15)), 'f', r.IntN(12), 64)
		case 2:
			s = fmt.Sprintf("%de%d", r.Int64N(1<<54)-1<<53, r.IntN(60)-30)
		default:
			s = strconv.FormatFloat(r.Float64(), 'g', -1, 64)
		}
		checkNumber(t, s)
	}
	for _, s := range []string{"641", "1700000000123", "-12", "2.5", "0.25", "1e3"} {
		_, iok := atoi([]byte(s), 64)
		_, fok := atof([]byte(s))
		if !fok || (iok != !containsAny(s, ".e")) {
			t.Errorf("%q does not take the fast path (atoi %v, atof %v)", s, iok, fok)
		}
	}
}

func containsAny(s, chars string) bool {
	for i := range len(s) {
		for j := range len(chars) {
			if s[i] == chars[j] {
				return true
			}
		}
	}
	return false
}

// FuzzNumbers checks the fast number parsers against strconv on any text.
func FuzzNumbers(f *testing.F) {
	for _, s := range numberCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkNumber(t, s) })
}

func BenchmarkAtoi(b *testing.B) {
	in := []byte("1700000000123")
	for b.Loop() {
		atoi(in, 64)
	}
}
