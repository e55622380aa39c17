package memory

import (
	"bytes"
	"encoding/hex"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func TestKeyencTable(t *testing.T) {
	negZero := math.Copysign(0, -1)
	cases := []struct {
		name string
		got  []byte
		want string
	}{
		{"Uint64(1)", AppendUint64(nil, 1), "0000000000000001"},
		{"Uint32(max)", AppendUint32(nil, math.MaxUint32), "ffffffff"},
		{"Uint16(258)", AppendUint16(nil, 258), "0102"},
		{"Uint8(7)", AppendUint8(nil, 7), "07"},
		{"Int64(min)", AppendInt64(nil, math.MinInt64), "0000000000000000"},
		{"Int64(-1)", AppendInt64(nil, -1), "7fffffffffffffff"},
		{"Int64(0)", AppendInt64(nil, 0), "8000000000000000"},
		{"Int32(-1)", AppendInt32(nil, -1), "7fffffff"},
		{"Int16(1)", AppendInt16(nil, 1), "8001"},
		{"Int8(-128)", AppendInt8(nil, -128), "00"},
		{"Int8(127)", AppendInt8(nil, 127), "ff"},
		{"Float64(0)", AppendFloat64(nil, 0), "8000000000000000"},
		{"Float64(-0)", AppendFloat64(nil, negZero), "8000000000000000"},
		{"Float64(1)", AppendFloat64(nil, 1), "bff0000000000000"},
		{"Float64(-1)", AppendFloat64(nil, -1), "400fffffffffffff"},
		{"Float64(+Inf)", AppendFloat64(nil, math.Inf(1)), "fff0000000000000"},
		{"Float64(-Inf)", AppendFloat64(nil, math.Inf(-1)), "000fffffffffffff"},
		{"Float64(NaN)", AppendFloat64(nil, math.NaN()), "ffffffffffffffff"},
		{"Float64(-NaN)", AppendFloat64(nil, math.Float64frombits(0xfff8000000000001)), "ffffffffffffffff"},
		{"Float32(-0)", AppendFloat32(nil, float32(negZero)), "80000000"},
		{"Float32(NaN)", AppendFloat32(nil, float32(math.NaN())), "ffffffff"},
		{"Bool(false)", AppendBool(nil, false), "00"},
		{"Bool(true)", AppendBool(nil, true), "01"},
		{"String()", AppendString(nil, ""), "0001"},
		{"String(a\\x00b)", AppendString(nil, "a\x00b"), "6100ff620001"},
		{"String(\\xff)", AppendString(nil, "\xff"), "ff0001"},
		{"Bytes(nil)", AppendBytes(nil, nil), "0001"},
		{"Bytes(\\x00)", AppendBytes(nil, []byte{0}), "00ff0001"},
		{"Time(0)", AppendTime(nil, time.Unix(0, 0)), "800000000000000000000000"},
		{"Time(-1s+5ns)", AppendTime(nil, time.Unix(-1, 5)), "7fffffffffffffff00000005"},
	}
	for _, tc := range cases {
		if got := hex.EncodeToString(tc.got); got != tc.want {
			t.Errorf("%s = %s, want %s", tc.name, got, tc.want)
		}
	}
	if got := AppendUint8([]byte("p"), 1); string(got) != "p\x01" {
		t.Errorf("Append did not append: %q", got)
	}
}

// checkOrder checks that bytes.Compare of enc(a), enc(b) has the oracle's sign.
func checkOrder[V any](t *testing.T, name string, vals []V, enc func([]byte, V) []byte, oracle func(a, b V) int) {
	t.Helper()
	for _, a := range vals {
		for _, b := range vals {
			ea, eb := enc(nil, a), enc(nil, b)
			if got, want := sign(bytes.Compare(ea, eb)), oracle(a, b); got != want {
				t.Fatalf("%s: %v vs %v: bytes.Compare %d, oracle %d (%x, %x)", name, a, b, got, want, ea, eb)
			}
			// Descending: Invert reverses the order.
			Invert(ea)
			Invert(eb)
			if got, want := sign(bytes.Compare(ea, eb)), -oracle(a, b); got != want {
				t.Fatalf("%s inverted: %v vs %v: %d, want %d", name, a, b, got, want)
			}
		}
	}
}

func TestKeyencOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	ints := append([]int64{}, keyInts...)
	for i := 0; i < 60; i++ {
		ints = append(ints, r.Int64()>>r.IntN(64))
	}
	checkOrder(t, "Int64", ints, AppendInt64, oracleInt)
	checkOrder(t, "Int32", ints, func(d []byte, v int64) []byte { return AppendInt32(d, int32(v)) },
		func(a, b int64) int { return oracleInt(int64(int32(a)), int64(int32(b))) })
	checkOrder(t, "Int16", ints, func(d []byte, v int64) []byte { return AppendInt16(d, int16(v)) },
		func(a, b int64) int { return oracleInt(int64(int16(a)), int64(int16(b))) })
	checkOrder(t, "Int8", ints, func(d []byte, v int64) []byte { return AppendInt8(d, int8(v)) },
		func(a, b int64) int { return oracleInt(int64(int8(a)), int64(int8(b))) })
	checkOrder(t, "Uint64", ints, func(d []byte, v int64) []byte { return AppendUint64(d, uint64(v)) },
		func(a, b int64) int { return oracleUint(uint64(a), uint64(b)) })
	checkOrder(t, "Uint16", ints, func(d []byte, v int64) []byte { return AppendUint16(d, uint16(v)) },
		func(a, b int64) int { return oracleUint(uint64(uint16(a)), uint64(uint16(b))) })

	floats := append([]float64{}, keyFloats...)
	for i := 0; i < 40; i++ {
		floats = append(floats, r.NormFloat64()*math.Pow(10, float64(r.IntN(40)-20)))
	}
	checkOrder(t, "Float64", floats, AppendFloat64, oracleFloat)
	checkOrder(t, "Float32", floats, func(d []byte, v float64) []byte { return AppendFloat32(d, float32(v)) },
		func(a, b float64) int { return oracleFloat(float64(float32(a)), float64(float32(b))) })

	checkOrder(t, "Bool", []bool{false, true}, AppendBool, oracleBool)
	checkOrder(t, "String", keyStrings, AppendString, func(a, b string) int { return oracleBytes([]byte(a), []byte(b)) })
	bs := [][]byte{nil, {}, {0}, {0, 0}, {0, 0xff}, {0xff}, {0xff, 0}, {1}, []byte("abc")}
	checkOrder(t, "Bytes", bs, AppendBytes, oracleBytes)

	var times []time.Time
	for _, s := range []int64{-62135596800, -2, -1, 0, 1, 1 << 33} {
		for _, ns := range []int64{0, 1, 999999999} {
			times = append(times, time.Unix(s, ns), time.Unix(s, ns).In(time.FixedZone("Z", 3600)))
		}
	}
	checkOrder(t, "Time", times, AppendTime, oracleTime)
}

// TestKeyencStringsPrefixFree checks that a string followed by another field
// orders by the string first, which needs a prefix-free encoding.
func TestKeyencStringsPrefixFree(t *testing.T) {
	type pair struct {
		s string
		n int64
	}
	var pairs []pair
	for _, s := range keyStrings {
		for _, n := range []int64{math.MinInt64, -1, 0, 1, math.MaxInt64} {
			pairs = append(pairs, pair{s, n})
		}
	}
	checkOrder(t, "String+Int64", pairs,
		func(d []byte, p pair) []byte { return AppendInt64(AppendString(d, p.s), p.n) },
		func(a, b pair) int {
			if c := oracleBytes([]byte(a.s), []byte(b.s)); c != 0 {
				return c
			}
			return oracleInt(a.n, b.n)
		})
}

func TestPrefix(t *testing.T) {
	cases := []struct {
		key  []byte
		want uint64
	}{
		{nil, 0},
		{[]byte{0x01}, 0x0100000000000000},
		{[]byte{0xff, 0xee}, 0xffee000000000000},
		{[]byte{1, 2, 3, 4, 5, 6, 7}, 0x0102030405060700},
		{[]byte{1, 2, 3, 4, 5, 6, 7, 8}, 0x0102030405060708},
		{[]byte{1, 2, 3, 4, 5, 6, 7, 8, 9}, 0x0102030405060708},
	}
	for _, tc := range cases {
		if got := Prefix(tc.key); got != tc.want {
			t.Errorf("Prefix(%x) = %x, want %x", tc.key, got, tc.want)
		}
	}
	// Where two prefixes differ, their order is the keys' order.
	var keys [][]byte
	for _, s := range keyStrings {
		keys = append(keys, AppendString(nil, s), []byte(s))
	}
	for _, a := range keys {
		for _, b := range keys {
			pa, pb := Prefix(a), Prefix(b)
			if pa != pb && oracleUint(pa, pb) != sign(bytes.Compare(a, b)) {
				t.Fatalf("Prefix order of %x, %x disagrees with the keys'", a, b)
			}
		}
	}
}
