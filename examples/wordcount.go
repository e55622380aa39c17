package examples

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/formats/text"
)

// WordCount is one word and the number of times it occurs.
type WordCount struct {
	Word  string
	Count int64
}

// RunWordCount is Flink's WordCount: it splits every line of input (a text file,
// directory or glob; "" for WordCountLines) into words as Tokenize does, counts
// each word (a combiner before the shuffle, then a hash aggregation per
// subtask) and writes "word count" lines sorted by word.
func RunWordCount(ctx context.Context, o Options, input string) error {
	env := dataset.New(o.Dataset)
	var lines *dataset.DataSet[string]
	if input == "" {
		lines = dataset.FromSlice(env, WordCountLines)
	} else {
		src, err := text.Open(input)
		if err != nil {
			return fmt.Errorf("examples: wordcount: input file: %w", err)
		}
		lines = dataset.FromSource(env, "input "+input, src)
	}
	counts := WordCountProgram(lines)
	sorted := dataset.Sort(counts, func(w WordCount) string { return w.Word }, dataset.Ascending)
	out := dataset.Map(sorted, func(w WordCount) string { return w.Word + " " + strconv.FormatInt(w.Count, 10) })
	if err := emit(ctx, env, out, o); err != nil {
		return fmt.Errorf("examples: wordcount: %w", err)
	}
	return nil
}

// WordCountProgram counts the words of lines, in no particular order.
func WordCountProgram(lines *dataset.DataSet[string]) *dataset.DataSet[WordCount] {
	words := dataset.FlatMap(lines, splitWords)
	return dataset.GroupBy(words, func(w WordCount) string { return w.Word }).
		Reduce(func(a, b WordCount) WordCount { return WordCount{Word: a.Word, Count: a.Count + b.Count} })
}

// tokenizers hold the slabs lowercase words are copied into, one per running
// call of splitWords (FlatMap calls it from every subtask at once).
var tokenizers = sync.Pool{New: func() any { return new(tokenizer) }}

// splitWords emits (word, 1) for every word of line.
func splitWords(line string, emit func(WordCount)) {
	t := tokenizers.Get().(*tokenizer)
	t.split(line, emit)
	tokenizers.Put(t)
}

// Tokenize returns the words of line as Flink's WordCount finds them:
// line.toLowerCase().split("\\W+") without empty tokens, where a word
// character is an ASCII letter, digit or '_' (Java's \W is ASCII-only) and
// lowercasing is Unicode's, so 'K' (the Kelvin sign) lowers to the word
// character 'k' while 'é' separates words.
func Tokenize(line string) []string {
	var words []string
	var t tokenizer
	t.split(line, func(w WordCount) { words = append(words, w.Word) })
	return words
}

// tokenizer splits lines into words. Words that are a lowercase ASCII part of
// the line are substrings of it; others are built in word and copied to the
// slab, so that tokenizing allocates nothing per line.
type tokenizer struct {
	word []byte
	sl   slab
}

func (t *tokenizer) split(line string, emit func(WordCount)) {
	start := -1      // start of the current word in line, -1 between words
	changed := false // the current word differs from line[start:i]: it is in t.word
	for i := 0; i < len(line); {
		c := line[i]
		size := 1
		var lc byte // the lowercase word character at i, 0 for a separator
		split := false
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '_':
			lc = c
		case 'A' <= c && c <= 'Z':
			lc = c + ('a' - 'A')
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRuneInString(line[i:])
			size = n
			if r == '\u0130' { // Java lowers 'İ' to "i\u0307": a word character, then a separator
				lc, split = 'i', true
			} else if l := unicode.ToLower(r); l < utf8.RuneSelf && isWordByte(byte(l)) {
				lc = byte(l)
			}
		}
		if lc == 0 {
			if start >= 0 {
				t.emitWord(line, start, i, changed, emit)
				start = -1
			}
			i += size
			continue
		}
		if start < 0 {
			start, changed = i, false
			t.word = t.word[:0]
		}
		if !changed && (size != 1 || lc != c) {
			changed = true
			t.word = append(t.word[:0], line[start:i]...)
		}
		if changed {
			t.word = append(t.word, lc)
		}
		i += size
		if split {
			t.emitWord(line, start, i, changed, emit)
			start = -1
		}
	}
	if start >= 0 {
		t.emitWord(line, start, len(line), changed, emit)
	}
}

func (t *tokenizer) emitWord(line string, start, end int, changed bool, emit func(WordCount)) {
	if changed {
		emit(WordCount{Word: t.sl.String(t.word), Count: 1})
		return
	}
	emit(WordCount{Word: line[start:end], Count: 1})
}

func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}
