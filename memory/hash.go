package memory

import (
	"encoding/binary"
	"math/bits"
)

const (
	hashP0 = 0xa0761d6478bd642f
	hashP1 = 0xe7037ed1a0b428db
	hashP2 = 0x8ebc6af09c88c6e3
	hashP3 = 0x589965cc75374cc3
)

func hashMix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// Hash returns a 64-bit hash of b under seed (a wyhash-style multiply-mix). It is
// deterministic across processes and machines, so producers and consumers of an
// exchange agree on partitions, and a new seed gives an independent hash for
// recursive repartitioning. Operators hash the encoded key bytes (see Key encoding);
// partitioners use the high bits and hash tables the low bits.
func Hash(b []byte, seed uint64) uint64 {
	n := len(b)
	h := seed ^ hashP0
	for len(b) >= 16 {
		h = hashMix(binary.LittleEndian.Uint64(b)^hashP1, binary.LittleEndian.Uint64(b[8:])^h)
		b = b[16:]
	}
	var x, y uint64
	switch {
	case len(b) >= 8:
		x = binary.LittleEndian.Uint64(b)
		y = binary.LittleEndian.Uint64(b[len(b)-8:])
	case len(b) >= 4:
		x = uint64(binary.LittleEndian.Uint32(b))
		y = uint64(binary.LittleEndian.Uint32(b[len(b)-4:]))
	case len(b) > 0:
		x = uint64(b[0])<<16 | uint64(b[len(b)>>1])<<8 | uint64(b[len(b)-1])
	}
	h = hashMix(x^hashP2, y^h)
	return hashMix(h^uint64(n)^hashP3, hashP1)
}

// HashUint64 hashes an 8-byte encoded key given as its big-endian value (as
// memory.Prefix returns it) under seed: HashUint64(Prefix(k), s) == Hash(k, s) for
// every 8-byte k, without touching memory.
func HashUint64(v, seed uint64) uint64 {
	x := bits.ReverseBytes64(v)
	return hashMix(hashMix(x^hashP2, x^seed^hashP0)^8^hashP3, hashP1)
}
