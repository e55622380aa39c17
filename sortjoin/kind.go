package sortjoin

import "fmt"

// JoinKind says which records a join emits.
type JoinKind uint8

const (
	// Inner emits every pair of left and right records with equal keys.
	Inner JoinKind = iota
	// LeftOuter emits Inner's pairs and every left record without a match, with a nil right.
	LeftOuter
	// RightOuter emits Inner's pairs and every right record without a match, with a nil left.
	RightOuter
	// FullOuter emits LeftOuter's and RightOuter's records.
	FullOuter
	// Semi emits each left record that has at least one match, once, with a nil right.
	Semi
	// Anti emits each left record that has no match, with a nil right.
	Anti
)

func (k JoinKind) String() string {
	switch k {
	case Inner:
		return "inner"
	case LeftOuter:
		return "left-outer"
	case RightOuter:
		return "right-outer"
	case FullOuter:
		return "full-outer"
	case Semi:
		return "semi"
	case Anti:
		return "anti"
	}
	return fmt.Sprintf("JoinKind(%d)", uint8(k))
}

// Side names one input of a two-input operator.
type Side uint8

const (
	Left Side = iota
	Right
)

func (s Side) String() string {
	if s == Left {
		return "left"
	}
	return "right"
}

// EmitFunc receives one joined pair: the left and right records' keys are equal
// (the key is passed once), and a missing side is nil. The slices are valid only
// during the call.
type EmitFunc func(key, left, right []byte) error
