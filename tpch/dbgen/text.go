package dbgen

import (
	"sync"
	"unsafe"
)

// The text pool. dbgen builds, once, a fixed buffer of pseudo-English
// sentences from the grammar of dists.dss with its own stream (the text
// stream, seed 933588178), and takes every comment as a slice of it: a random
// offset in [0, poolSize−max] and a random length in [min, max], where
// min and max are 0.4 and 1.6 times the column's average length (two draws
// from the column's stream).
//
// The pool size is part of the data: it scales every offset. TPC's dbgen
// uses 300 MiB; DuckDB's dbgen (load_dists(10 MiB)), whose files this package
// reproduces, uses 10 MiB. Its word list also spells the preposition
// "without" as "whithout" (see dists.go); both were found by comparing with
// DuckDB's files.

// poolSize is the size of the text pool in bytes.
const poolSize = 10 << 20

var (
	poolOnce sync.Once
	pool     string
)

// textPool returns the text pool, building it on first use.
func textPool() string {
	poolOnce.Do(func() {
		b := buildPool(poolSize)
		pool = unsafe.String(unsafe.SliceData(b), len(b))
	})
	return pool
}

// index maps every draw in [1, total] of a distribution to its word.
type index []string

func newIndex(d *dist) index {
	ix := make(index, d.total()+1)
	i := 0
	for w := int64(1); w <= d.total(); w++ {
		for d.cum[i] < w {
			i++
		}
		ix[w] = d.text[i]
	}
	ix[0] = d.text[0]
	return ix
}

// sentenceGen writes sentences of the grammar from one stream.
type sentenceGen struct {
	st                                                    streams
	nouns, verbs, adverbs, adjectives, auxiliaries, preps index
}

func newSentenceGen(seed int64) *sentenceGen {
	g := &sentenceGen{
		nouns: newIndex(distNouns), verbs: newIndex(distVerbs), adverbs: newIndex(distAdverbs),
		adjectives: newIndex(distAdjectives), auxiliaries: newIndex(distAuxiliaries), preps: newIndex(distPrepositions),
	}
	g.st.s[sText].value = seed
	return g
}

func (g *sentenceGen) draw(max int64) int64 { return g.st.random(sText, 1, max) }

// word appends a word of ix and a space.
func (g *sentenceGen) word(b []byte, ix index) []byte {
	b = append(b, ix[g.draw(int64(len(ix)-1))]...)
	return append(b, ' ')
}

// form returns which of the first forms of d a draw selects (0..len-1).
func (g *sentenceGen) form(d *dist) int {
	j := g.draw(d.total())
	f := 0
	for _, c := range d.cum[:len(d.cum)-1] {
		if c < j {
			f++
		}
	}
	return f
}

func (g *sentenceGen) np(b []byte) []byte {
	switch g.form(distNP) {
	case 0:
		b = g.word(b, g.nouns)
	case 1:
		b = g.word(b, g.adjectives)
		b = g.word(b, g.nouns)
	case 2:
		b = g.word(b, g.adjectives)
		b[len(b)-1] = ','
		b = append(b, ' ')
		b = g.word(b, g.adjectives)
		b = g.word(b, g.nouns)
	default:
		b = g.word(b, g.adverbs)
		b = g.word(b, g.adjectives)
		b = g.word(b, g.nouns)
	}
	return b
}

func (g *sentenceGen) vp(b []byte) []byte {
	switch g.form(distVP) {
	case 0:
		b = g.word(b, g.verbs)
	case 1:
		b = g.word(b, g.auxiliaries)
		b = g.word(b, g.verbs)
	case 2:
		b = g.word(b, g.verbs)
		b = g.word(b, g.adverbs)
	default:
		b = g.word(b, g.auxiliaries)
		b = g.word(b, g.verbs)
		b = g.word(b, g.adverbs)
	}
	return b
}

func (g *sentenceGen) prep(b []byte) []byte {
	b = g.word(b, g.preps)
	b = append(b, "the "...)
	return g.np(b)
}

// terminate replaces the last space with a terminator and a space.
func (g *sentenceGen) terminate(b []byte) []byte {
	d := distTerminators
	j := g.draw(d.total())
	i := 0
	for d.cum[i] < j {
		i++
	}
	b = append(b[:len(b)-1], d.text[i]...)
	return append(b, ' ')
}

// sentence appends one sentence.
func (g *sentenceGen) sentence(b []byte) []byte {
	switch g.form(distGrammar) {
	case 0: // N V T
		b = g.np(b)
		b = g.vp(b)
	case 1: // N V P T
		b = g.np(b)
		b = g.vp(b)
		b = g.prep(b)
	case 2: // N V N T
		b = g.np(b)
		b = g.vp(b)
		b = g.np(b)
	case 3: // N P V N T
		b = g.np(b)
		b = g.prep(b)
		b = g.vp(b)
		b = g.np(b)
	default: // N P V P T
		b = g.np(b)
		b = g.prep(b)
		b = g.vp(b)
		b = g.prep(b)
	}
	return g.terminate(b)
}

// buildPool generates the first size bytes of the text.
func buildPool(size int) []byte {
	g := newSentenceGen(streamDefs[sText].seed)
	b := make([]byte, 0, size+512)
	for len(b) <= size {
		b = g.sentence(b)
	}
	return b[:size:size]
}

// text draws a comment of average length avg from stream id: a slice of the
// pool (dbgen's TEXT macro / dbg_text).
func (st *streams) text(id int, avg int) string {
	lo, hi := int64(float64(avg)*0.4), int64(float64(avg)*1.6)
	off := st.random(id, 0, poolSize-hi)
	n := st.random(id, lo, hi)
	return textPool()[off : off+n]
}

// alphaNum are the characters of random strings (addresses).
const alphaNum = "0123456789abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ,"

// vstr appends a random string of average length avg from stream id (dbgen's
// V_STR / tpch_a_rnd): a length draw, then one draw per five characters,
// six bits a character.
func (st *streams) vstr(b []byte, id int, avg int) []byte {
	lo, hi := int64(float64(avg)*0.4), int64(float64(avg)*1.6)
	n := st.random(id, lo, hi)
	var c int64
	for i := int64(0); i < n; i++ {
		if i%5 == 0 {
			c = st.random(id, 0, maxLong)
		}
		b = append(b, alphaNum[c&63])
		c >>= 6
	}
	return b
}
