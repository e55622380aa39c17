package resource

import (
	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/spill"
)

// Env is what every operator and task draws on: the memory manager its
// reservations come from, the file system its spill files go to and the
// options of those files.
type Env struct {
	Memory *memory.Manager
	FS     spill.FS
	Spill  spill.Options
}
