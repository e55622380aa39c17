package dataset

import (
	"github.com/weirdata/weir/internal/typed"
	"github.com/weirdata/weir/memory"
)

// keyer is a key selector's encoding (see typed.Keyer).
type keyer[T any] = typed.Keyer[T]

// Order is a sort direction.
type Order = memory.Order

// The sort directions.
const (
	Ascending  = memory.Ascending
	Descending = memory.Descending
)
