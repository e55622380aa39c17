package memory

import (
	"fmt"
	"math"
	"math/bits"
	"testing"
)

// TestHashGolden pins Hash's values: producers and consumers in different
// processes must agree on partitions, so a change of algorithm must be deliberate.
// (The values were taken from the implementation when this test was written.)
func TestHashGolden(t *testing.T) {
	cases := []struct {
		in   string
		seed uint64
		want uint64
	}{
		{"", 0, 0xe1ad6149afb0fe14},
		{"a", 0, 0x1e35a379918545f7},
		{"abc", 0, 0x165de4d472b92a1e},
		{"hello, world", 0, 0xe73eed63b0cabcf3},
		{"0123456789abcdef", 0, 0xbd34afa0e8ec42fe},
		{"0123456789abcdefXYZ", 0, 0xc97f322ad30ccc21},
		{"hello, world", 42, 0x9eed1953ab5eaf8d},
	}
	for _, tc := range cases {
		if got := Hash([]byte(tc.in), tc.seed); got != tc.want {
			t.Errorf("Hash(%q, %d) = %#x, want %#x", tc.in, tc.seed, got, tc.want)
		}
	}
}

// hashInputs returns inputs of every length up to 64, and for each length the
// variants that differ from it in one byte at each position.
func hashInputs() [][]byte {
	var out [][]byte
	for n := 0; n <= 64; n++ {
		base := make([]byte, n)
		for i := range base {
			base[i] = byte(i*31 + n)
		}
		out = append(out, base)
		for i := 0; i < n; i++ {
			v := append([]byte(nil), base...)
			v[i] ^= 0x01
			out = append(out, v)
		}
	}
	return out
}

func TestHashDistinctAndSeeded(t *testing.T) {
	inputs := hashInputs()
	for _, seed := range []uint64{0, 1, math.MaxUint64} {
		seen := map[uint64]int{}
		for i, in := range inputs {
			h := Hash(in, seed)
			if j, dup := seen[h]; dup {
				t.Fatalf("seed %d: inputs %x and %x collide", seed, inputs[j], in)
			}
			seen[h] = i
			if h != Hash(in, seed) {
				t.Fatal("Hash is not deterministic")
			}
		}
	}
	same := 0
	for _, in := range inputs {
		if Hash(in, 0) == Hash(in, 1) {
			same++
		}
	}
	if same != 0 {
		t.Errorf("%d of %d inputs hash the same under seeds 0 and 1", same, len(inputs))
	}
}

// TestHashPartitions checks the distribution of encoded keys over partitions
// (high bits) and hash-table buckets (low bits), and that two seeds partition
// independently.
func TestHashPartitions(t *testing.T) {
	const n = 1 << 16
	keySets := map[string]func(i int) []byte{
		"int64":  func(i int) []byte { return AppendInt64(nil, int64(i)) },
		"string": func(i int) []byte { return AppendString(nil, fmt.Sprintf("customer#%09d", i)) },
		"short":  func(i int) []byte { return []byte{byte(i), byte(i >> 8)} },
	}
	for name, key := range keySets {
		var parts [16]int
		var buckets [1024]int
		agree := 0
		for i := 0; i < n; i++ {
			k := key(i)
			h := Hash(k, 0)
			parts[h>>60]++
			buckets[h&1023]++
			if h>>60 == Hash(k, 1)>>60 {
				agree++
			}
		}
		mean := float64(n) / 16
		for p, c := range parts {
			if math.Abs(float64(c)-mean) > 0.05*mean { // 5% is over 4 standard deviations
				t.Errorf("%s: partition %d holds %d keys, mean %.0f", name, p, c, mean)
			}
		}
		chi2, exp := 0.0, float64(n)/1024
		for _, c := range buckets {
			chi2 += (float64(c) - exp) * (float64(c) - exp) / exp
		}
		if chi2 > 1023+6*math.Sqrt(2*1023) {
			t.Errorf("%s: chi-square over 1024 buckets = %.0f (expect about 1023)", name, chi2)
		}
		if f := float64(agree) / n; math.Abs(f-1.0/16) > 0.01 {
			t.Errorf("%s: seeds 0 and 1 put %.3f of keys in the same partition, want about 1/16", name, f)
		}
	}
}

// TestHashAvalanche checks that flipping one input bit flips about half the
// output bits.
func TestHashAvalanche(t *testing.T) {
	for _, n := range []int{1, 3, 8, 12, 16, 33} {
		total, trials := 0, 0
		for k := 0; k < 64; k++ {
			in := make([]byte, n)
			for i := range in {
				in[i] = byte(k*7 + i*13)
			}
			h := Hash(in, uint64(k))
			for bit := 0; bit < 8*n; bit++ {
				in[bit/8] ^= 1 << (bit % 8)
				total += bits.OnesCount64(h ^ Hash(in, uint64(k)))
				in[bit/8] ^= 1 << (bit % 8)
				trials++
			}
		}
		if avg := float64(total) / float64(trials); avg < 30 || avg > 34 {
			t.Errorf("length %d: one flipped input bit flips %.2f output bits on average, want about 32", n, avg)
		}
	}
}

func TestHashAllocs(t *testing.T) {
	in := []byte("some key of moderate length, 40 bytes..")
	var sink uint64
	if a := testing.AllocsPerRun(100, func() { sink += Hash(in, 3) + HashUint64(7, 3) }); a != 0 {
		t.Errorf("Hash: %v allocs", a)
	}
	_ = sink
}

// TestHashUint64MatchesHash checks what HashUint64's doc says: it hashes an
// 8-byte key, so for every 8-byte encoded key k it agrees with Hash(k), or
// two operators (one hashing the bytes, one the value: the typed keyers of
// int64, int and uint64 keys) would send equal keys to different partitions.
// v = Prefix(k) = binary.BigEndian.Uint64(k) is the value of the encoded key.
func TestHashUint64MatchesHash(t *testing.T) {
	fixed := func(v, seed uint64) uint64 {
		x := bits.ReverseBytes64(v)
		return hashMix(hashMix(x^hashP2, x^seed^hashP0)^8^hashP3, hashP1)
	}
	for _, v := range []int64{0, 1, -1, 12345, math.MinInt64, math.MaxInt64} {
		k := AppendInt64(nil, v)
		for _, seed := range []uint64{0, 7} {
			want := Hash(k, seed)
			if got := fixed(Prefix(k), seed); got != want {
				t.Fatalf("the proposed fix is wrong for %d: %#x != %#x", v, got, want)
			}
			if got := HashUint64(Prefix(k), seed); got != want {
				t.Errorf("HashUint64(Prefix(k), %d) = %#x, Hash(k, %d) = %#x for the key of int64 %d", seed, got, seed, want, v)
			}
		}
	}
}
