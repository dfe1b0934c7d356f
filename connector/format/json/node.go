package json

import (
	"github.com/sluicesql/sluice/types"
)

// node is a type compiled for decoding and encoding: nested types are
// pointers, and ROW fields have a name index and pre-quoted keys.
type node struct {
	t    types.Type
	kind types.Kind
	elem *node // ARRAY and MULTISET element; MAP key
	val  *node // MAP value

	names []string       // ROW field names
	subs  []*node        // ROW field types
	index map[string]int // ROW field name -> position
	keys  [][]byte       // ROW `"name":` as JSON
}

func compile(t types.Type) *node {
	n := &node{t: t, kind: t.Kind}
	switch t.Kind {
	case types.KindArray, types.KindMultiset:
		n.elem = compile(*t.Elem)
	case types.KindMap:
		n.elem = compile(*t.Elem)
		n.val = compile(*t.Value)
	case types.KindRow:
		n.names = make([]string, len(t.Fields))
		n.subs = make([]*node, len(t.Fields))
		n.index = make(map[string]int, len(t.Fields))
		n.keys = make([][]byte, len(t.Fields))
		for i, f := range t.Fields {
			n.names[i] = f.Name
			n.subs[i] = compile(f.Type)
			if _, dup := n.index[f.Name]; !dup {
				n.index[f.Name] = i
			}
			k := appendString(nil, f.Name)
			n.keys[i] = append(k, ':')
		}
	}
	return n
}

// lookup returns the position of the field called name, or -1. hint is the
// position expected next: records usually list fields in schema order, and
// checking it first saves the map lookup.
func (n *node) lookup(name []byte, hint int) int {
	if hint < len(n.names) && n.names[hint] == string(name) {
		return hint
	}
	if i, ok := n.index[string(name)]; ok {
		return i
	}
	return -1
}
