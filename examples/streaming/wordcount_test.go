package streaming

import (
	"slices"
	"testing"
)

// TestTokenize follows the tokenizer of Flink's WordCount:
// line.toLowerCase().split("\\W+") without empty tokens.
func TestTokenize(t *testing.T) {
	for _, c := range []struct {
		line string
		want []string
	}{
		{"To be, or not to be,--that is the question:--", []string{"to", "be", "or", "not", "to", "be", "that", "is", "the", "question"}},
		{"  Sonn' und Welten_2 ", []string{"sonn", "und", "welten_2"}},
		{"", nil},
		{"--!", nil},
		{"caf\u00e9 na\u00efve", []string{"caf", "na", "ve"}}, // \W is ASCII-only
		{"\u212aelvin", []string{"kelvin"}},                   // Java lowers the Kelvin sign to 'k'
		{"\u0130stanbul", []string{"i", "stanbul"}},           // Java lowers 'İ' to "i\u0307"
	} {
		var got []string
		Tokenize(c.line, func(w string) { got = append(got, w) })
		if !slices.Equal(got, c.want) {
			t.Errorf("%q: %q, want %q", c.line, got, c.want)
		}
	}
}
