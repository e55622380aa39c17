package optimizer

import (
	"fmt"
	"slices"
	"strings"
)

// partKind is how a data set is spread over the subtasks that produce it
// (Flink's global properties).
type partKind uint8

const (
	anyPart        partKind = iota // nothing known
	hashPart                       // equal values of fields are in one subtask
	rangePart                      // fields in key ranges, subtask order = key order
	replicatedPart                 // every subtask holds all of it (after a broadcast)
	rebalancedPart                 // spread round robin (forced rebalance)
	customPart                     // a user's partitioner
)

func (k partKind) String() string {
	return [...]string{"ANY", "HASH", "RANGE", "REPLICATED", "REBALANCED", "CUSTOM"}[k]
}

// global is a data set's global properties: its partitioning and at which
// parallelism it holds.
type global struct {
	kind    partKind
	fields  []string // logical fields of a hash or range partitioning
	desc    []bool   // range: direction per field
	keyType string   // hash: the Go type hashed (partitionings of one type co-locate)
	par     int
}

func (g global) String() string {
	switch g.kind {
	case hashPart:
		return fmt.Sprintf("HASH(%s)", strings.Join(g.fields, ","))
	case rangePart:
		return fmt.Sprintf("RANGE(%s)", strings.Join(orderedFields(g.fields, g.desc), ","))
	}
	return g.kind.String()
}

// local is a data set's properties within each subtask.
type local struct {
	order   []string // sorted on these fields
	desc    []bool
	keyType string // the Go type of the sort key: one type, one byte order
}

// sortedAs reports whether the data is sorted ascending on exactly fields by
// a key of type keyType, as a sort-merge join on them would sort it.
func (l local) sortedAs(fields []string, keyType string) bool {
	if len(fields) == 0 || keyType == "" || l.keyType != keyType || !slices.Equal(l.order, fields) {
		return false
	}
	for _, d := range l.desc {
		if d {
			return false
		}
	}
	return true
}

// orderedAs reports whether the data is sorted on exactly fields in the
// directions desc, as a Sort by a key of type keyType would sort it: the same
// key type, or an order declared on the fields' values (no key type).
func (l local) orderedAs(fields []string, desc []bool, keyType string) bool {
	if len(fields) == 0 || !slices.Equal(l.order, fields) || (l.keyType != "" && l.keyType != keyType) {
		return false
	}
	return slices.Equal(normDesc(l.desc, len(fields)), normDesc(desc, len(fields)))
}

func (l local) String() string {
	if len(l.order) == 0 {
		return ""
	}
	return "ORDERED(" + strings.Join(orderedFields(l.order, l.desc), ",") + ")"
}

func orderedFields(fields []string, desc []bool) []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = f
		if i < len(desc) && desc[i] {
			out[i] += " DESC"
		}
	}
	return out
}

// props are a sub-plan's output properties.
type props struct {
	g global
	l local
}

func (p props) key() string {
	return p.g.String() + "|" + fmt.Sprint(p.g.par, p.g.keyType) + "|" + p.l.String()
}

// groups reports whether the partitioning keeps equal values of fields
// (a grouping or join key) in one subtask of par subtasks: a hash or range
// partitioning on a non-empty subset of them.
func (g global) groups(fields []string, par int) bool {
	if g.par != par || len(fields) == 0 || len(g.fields) == 0 {
		return false
	}
	if g.kind != hashPart && g.kind != rangePart {
		return false
	}
	for _, f := range g.fields {
		if !slices.Contains(fields, f) {
			return false
		}
	}
	return true
}

// hashedAs reports whether the partitioning is exactly the hash partitioning a
// keyed input would get: the same fields in order, the same key type and
// parallelism. Two inputs partitioned so are co-partitioned.
func (g global) hashedAs(fields []string, keyType string, par int) bool {
	return g.kind == hashPart && g.par == par && keyType != "" && g.keyType == keyType &&
		len(fields) > 0 && slices.Equal(g.fields, fields)
}

// rangedAs reports whether the partitioning is a range partitioning on fields
// in the given directions at par subtasks.
// One subtask holds every key, so at parallelism 1 any data set is.
func (g global) rangedAs(fields []string, desc []bool, par int) bool {
	if g.par == 1 && par == 1 && len(fields) > 0 {
		return true
	}
	return g.kind == rangePart && g.par == par && len(fields) > 0 &&
		slices.Equal(g.fields, fields) && slices.Equal(normDesc(g.desc, len(fields)), normDesc(desc, len(fields)))
}

func normDesc(d []bool, n int) []bool {
	out := make([]bool, n)
	copy(out, d)
	return out
}

// forward maps fields through an operator's forwarded fields ("f" or
// "f->g"): it returns the fields' names in the output, or false when one of
// them does not survive.
func forward(fields []string, fwd []string) ([]string, bool) {
	if len(fields) == 0 {
		return nil, false
	}
	out := make([]string, len(fields))
	for i, f := range fields {
		found := false
		for _, spec := range fwd {
			from, to, renamed := strings.Cut(spec, "->")
			from, to = strings.TrimSpace(from), strings.TrimSpace(to)
			if !renamed {
				to = from
			}
			if from == f {
				out[i], found = to, true
				break
			}
		}
		if !found {
			return nil, false
		}
	}
	return out, true
}

// through returns the properties of input i's data after operator n, which
// keeps only what n preserves or forwards.
func through(n *Node, i int, in props) props {
	if n.PreservesAll {
		return in
	}
	var fwd []string
	if i < len(n.Forwards) {
		fwd = n.Forwards[i]
	}
	out := props{g: global{kind: anyPart, par: n.Parallelism}}
	if in.g.kind == hashPart || in.g.kind == rangePart {
		if f, ok := forward(in.g.fields, fwd); ok {
			out.g = in.g
			out.g.fields = f
		}
	}
	if f, ok := forward(in.l.order, fwd); ok {
		out.l = local{order: f, desc: in.l.desc, keyType: in.l.keyType}
	}
	return out
}
