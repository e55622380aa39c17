package sink

import (
	"errors"
	"math"
	"testing"
	"time"
)

// The doubles print as Java's Double.toString (and Float.toString) does;
// the expected strings are Java's outputs (Double.MAX_VALUE, MIN_VALUE,
// Float.MAX_VALUE as their constants print).
func TestAppendJavaDouble(t *testing.T) {
	tenth := 0.1 // a variable: 0.1 + 0.2 in constants is exactly 0.3
	for _, c := range []struct {
		f    float64
		bits int
		want string
	}{
		{1, 64, "1.0"},
		{3.5, 64, "3.5"},
		{100, 64, "100.0"},
		{-42, 64, "-42.0"},
		{0.001, 64, "0.001"},
		{0.0001, 64, "1.0E-4"},
		{1e10, 64, "1.0E10"},
		{1e7, 64, "1.0E7"},
		{9999999, 64, "9999999.0"},
		{1234567.5, 64, "1234567.5"},
		{123456789, 64, "1.23456789E8"},
		{-2.5e7, 64, "-2.5E7"},
		{1.5e-5, 64, "1.5E-5"},
		{tenth + 2*tenth, 64, "0.30000000000000004"},
		{1e23, 64, "1.0E23"},
		{2e-3, 64, "0.002"},
		{15.277777777777777, 64, "15.277777777777777"},
		{math.MaxFloat64, 64, "1.7976931348623157E308"},
		{math.SmallestNonzeroFloat64, 64, "4.9E-324"},
		{0, 64, "0.0"},
		{math.Copysign(0, -1), 64, "-0.0"},
		{math.NaN(), 64, "NaN"},
		{math.Inf(1), 64, "Infinity"},
		{math.Inf(-1), 64, "-Infinity"},
		{float64(float32(0.1)), 32, "0.1"},
		{float64(float32(1e10)), 32, "1.0E10"},
		{math.MaxFloat32, 32, "3.4028235E38"},
		{float64(float32(2.5)), 32, "2.5"},
	} {
		if got := string(AppendJavaDouble(nil, c.f, c.bits)); got != c.want {
			t.Errorf("AppendJavaDouble(%v, %d) = %q, want %q", c.f, c.bits, got, c.want)
		}
	}
}

type wordCount struct {
	Word  string
	Count int
}

// carSpeed is TopSpeedWindowing's Tuple4<Integer, Integer, Double, Long>.
type carSpeed struct {
	CarID    int32
	Speed    int32
	Distance float64
	Time     int64
}

// session is SessionWindowing's Tuple3<String, Long, Integer>.
type session struct {
	Key   string
	Time  int64
	Count int32
}

type stringer struct{ n int }

func (s stringer) String() string { return "S" }

type ptrStringer struct{}

func (*ptrStringer) String() string { return "P" }

func str[T any](v T) string { return string(ToString[T]()(nil, v)) }

// The lines Flink's examples print: WordCount's (word,count),
// TopSpeedWindowing's expected output, SessionWindowing's.
func TestToStringFlinkExamples(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{str(wordCount{"to", 1}), "(to,1)"},
		{str(wordCount{"hello", 3}), "(hello,3)"},
		{str(carSpeed{0, 55, 15.277777777777777, 1424951918630}), "(0,55,15.277777777777777,1424951918630)"},
		{str(carSpeed{1, 50, 10.416666666666666, 1424951918632}), "(1,50,10.416666666666666,1424951918632)"},
		{str(carSpeed{0, 100, 1000.0, 1424951918700}), "(0,100,1000.0,1424951918700)"},
		{str(session{"a", 1, 1}), "(a,1,1)"},
		{str(session{"b", 1, 3}), "(b,1,3)"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestToStringRules(t *testing.T) {
	type nested struct {
		In struct{ A, B int }
		C  int
	}
	n := 7
	var nilp *int
	var iface any = wordCount{"x", 2}
	for _, c := range []struct{ got, want string }{
		{str("bare"), "bare"},
		{str(true), "true"},
		{str(int8(-5)), "-5"},
		{str(uint64(math.MaxUint64)), "18446744073709551615"},
		{str(float32(3.5)), "3.5"},
		{str(nested{struct{ A, B int }{1, 2}, 3}), "((1,2),3)"},
		{str([]int{1, 2, 3}), "[1, 2, 3]"},
		{str([2]string{"a", "b"}), "[a, b]"},
		{str([]int(nil)), "null"},
		{str(map[string]int{"b": 2, "a": 1}), "{a=1, b=2}"},
		{str(&n), "7"},
		{str(nilp), "null"},
		{str(iface), "(x,2)"},
		{str(struct{ V any }{}), "(null)"},
		{str(stringer{}), "S"},
		{str(ptrStringer{}), "P"},
		{str(&ptrStringer{}), "P"},
		{str(errors.New("boom")), "boom"},
		{str(struct{ P *ptrStringer }{}), "(null)"},
		{str(time.Date(2015, 2, 26, 13, 18, 38, 630e6, time.UTC)), "2015-02-26T13:18:38.630Z"},
		{str(time.Date(2015, 2, 26, 13, 18, 38, 0, time.UTC)), "2015-02-26T13:18:38Z"},
		{str(struct {
			W string
			D float64
		}{"w", 1e10}), "(w,1.0E10)"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
