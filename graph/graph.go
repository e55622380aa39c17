package graph

import (
	"github.com/weirdata/weir/dataset"
)

// Vertex is a vertex of a graph: its key and its value.
type Vertex[K comparable, VV any] struct {
	ID    K
	Value VV
}

// Edge is a directed edge from Src to Dst with a value.
type Edge[K comparable, EV any] struct {
	Src, Dst K
	Value    EV
}

// Graph is a graph of vertices and edges held as two data sets, as Gelly's
// Graph. Edges whose endpoints are not both vertices are left out when an
// iteration builds its adjacency; a key given to several vertices keeps the
// first value that arrives.
type Graph[K comparable, VV, EV any] struct {
	vertices *dataset.DataSet[Vertex[K, VV]]
	edges    *dataset.DataSet[Edge[K, EV]]
}

// FromDataSet returns the graph of vertices and edges (Gelly's
// Graph.fromDataSet).
func FromDataSet[K comparable, VV, EV any](vertices *dataset.DataSet[Vertex[K, VV]], edges *dataset.DataSet[Edge[K, EV]]) *Graph[K, VV, EV] {
	return &Graph[K, VV, EV]{vertices: vertices, edges: edges}
}

// Vertices returns the graph's vertices.
func (g *Graph[K, VV, EV]) Vertices() *dataset.DataSet[Vertex[K, VV]] { return g.vertices }

// Edges returns the graph's edges.
func (g *Graph[K, VV, EV]) Edges() *dataset.DataSet[Edge[K, EV]] { return g.edges }

// Direction says along which edges an iteration sends: Out from an edge's
// source to its destination, In the other way, All both ways (the graph taken
// as undirected, Gelly's getUndirected). The adjacency holds only what the
// direction needs: E entries for Out and In, 2E for All.
type Direction int

const (
	Out Direction = iota
	In
	All
)

func (d Direction) String() string {
	switch d {
	case Out:
		return "OUT"
	case In:
		return "IN"
	case All:
		return "ALL"
	}
	return "Direction(?)"
}
