package graph

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// OperatorIDs returns every node's stable id: a hash of the user's uid
// when set, else of the node's kind, the ids of its inputs (with their
// ports, in input order), and its place among the earlier nodes of the
// same kind on the same inputs. Renaming an operator keeps its id;
// inserting an operator changes the ids downstream of it, on its path only.
func OperatorIDs(p *Program) map[*Node]string {
	ids := make(map[*Node]string, len(p.Nodes))
	seen := map[string]int{}    // lineage -> nodes with it so far
	for _, n := range p.Nodes { // inputs come before the nodes they feed
		h := sha256.New()
		if n.UID != "" {
			h.Write([]byte("uid\x00" + n.UID))
		} else {
			lineage := "kind\x00" + n.Kind
			for _, in := range n.Inputs {
				lineage += "\x00" + ids[in.From] + "\x00" + in.Port
			}
			if n.Iter != nil {
				lineage += "\x00iteration"
			}
			k := seen[lineage]
			seen[lineage]++
			h.Write([]byte(lineage + "\x00" + strconv.Itoa(k)))
		}
		ids[n] = hex.EncodeToString(h.Sum(nil)[:16])
	}
	return ids
}
