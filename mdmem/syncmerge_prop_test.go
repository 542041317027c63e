package mdmem

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// propMemory is a small memory the property test edits: entries by id in
// a few sections, and tombstones.
type propMemory struct {
	order []string          // ids in file order
	text  map[string]string // id → content
	where map[string]string // id → section
	tomb  []string
}

var propSections = []string{"User preferences", "Key decisions", "Archive"}

func (m *propMemory) clone() *propMemory {
	c := &propMemory{order: append([]string(nil), m.order...), text: map[string]string{}, where: map[string]string{}, tomb: append([]string(nil), m.tomb...)}
	for k, v := range m.text {
		c.text[k] = v
	}
	for k, v := range m.where {
		c.where[k] = v
	}
	return c
}

func (m *propMemory) files() map[string][]byte {
	var b strings.Builder
	b.WriteString("# Core profile\n\n")
	for _, sec := range propSections {
		if sec == "Archive" {
			b.WriteString("## Pending confirmation\n\n# Topic index\n\n# Archive\n")
		} else {
			b.WriteString("## " + sec + "\n")
		}
		for _, id := range m.order {
			if m.where[id] == sec {
				fmt.Fprintf(&b, "- [%s] %s (agent · 2026-11-01)\n", id, m.text[id])
			}
		}
		b.WriteString("\n")
	}
	out := map[string][]byte{MainFile: []byte(b.String())}
	if len(m.tomb) > 0 {
		var t strings.Builder
		for _, id := range m.tomb {
			fmt.Fprintf(&t, `{"id":%q,"date":"2026-11-05","hash":"h-%s","key":"k"}`+"\n", id, id)
		}
		out[TombstonesPath] = []byte(t.String())
	}
	return out
}

// edit applies n random edits: add (ids from the side's own range), edit
// a text, move to another section, delete by hand, forget.
func (m *propMemory) edit(r *rand.Rand, side, n int) {
	for i := 0; i < n; i++ {
		switch op := r.IntN(5); {
		case op == 0 || len(m.order) == 0:
			id := fmt.Sprintf("pref-%d%02d", side, len(m.text)+i)
			if r.IntN(3) == 0 {
				id = fmt.Sprintf("pref-9%02d", len(m.text)) // both sides may mint it: a collision
			}
			if _, ok := m.text[id]; ok {
				continue
			}
			m.order = append(m.order, id)
			m.text[id] = fmt.Sprintf("fact %d from side %d", r.IntN(1000), side)
			m.where[id] = propSections[r.IntN(2)]
		default:
			id := m.order[r.IntN(len(m.order))]
			switch op {
			case 1:
				m.text[id] += fmt.Sprintf(" edited %d", r.IntN(3))
			case 2:
				m.where[id] = propSections[r.IntN(len(propSections))]
			case 3, 4:
				for j, x := range m.order {
					if x == id {
						m.order = append(m.order[:j], m.order[j+1:]...)
						break
					}
				}
				if op == 4 {
					m.tomb = append(m.tomb, id)
				}
			}
		}
	}
}

func liveIDs(files map[string][]byte) map[string]string {
	out := map[string]string{}
	for p, src := range files {
		if isMemoryFile(p) {
			for _, e := range ParseDoc(p, src).Entries {
				if e.ID != "" {
					out[e.ID] = e.Content
				}
			}
		}
	}
	return out
}

// TestMergeReplicasProperties checks, over random bases and edit scripts
// on both sides: the merge is symmetric; merging a side with itself, or
// with the base, gives that side; no id repeats; every id either side
// holds is in the result unless a side forgot it or deleted it by hand
// untouched on the other; no forgotten id is in it.
func TestMergeReplicasProperties(t *testing.T) {
	for seed := uint64(1); seed <= 300; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		base := &propMemory{text: map[string]string{}, where: map[string]string{}}
		base.edit(r, 0, 6)
		o, th := base.clone(), base.clone()
		o.edit(r, 1, 1+r.IntN(6))
		th.edit(r, 2, 1+r.IntN(6))
		B, O, T := base.files(), o.files(), th.files()
		s := func(f map[string][]byte, name string) MergeSide { return MergeSide{Files: f, Machine: name} }
		r1, err := MergeReplicas(MergeInput{Base: B, Sides: [2]MergeSide{s(O, "a"), s(T, "b")}})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		r2, err := MergeReplicas(MergeInput{Base: B, Sides: [2]MergeSide{s(T, "b"), s(O, "a")}})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if filesText(r1.Files) != filesText(r2.Files) {
			t.Fatalf("seed %d: not symmetric:\n%s\n---\n%s", seed, filesText(r1.Files), filesText(r2.Files))
		}
		for _, x := range []map[string][]byte{O, T} {
			same, err := MergeReplicas(MergeInput{Base: B, Sides: [2]MergeSide{s(x, "a"), s(x, "b")}})
			if err != nil || filesText(same.Files) != filesText(x) {
				t.Fatalf("seed %d: merge(B, X, X) != X: %v", seed, err)
			}
			id, err := MergeReplicas(MergeInput{Base: B, Sides: [2]MergeSide{s(B, "a"), s(x, "b")}})
			if err != nil || filesText(id.Files) != filesText(x) {
				t.Fatalf("seed %d: merge(B, B, X) != X: %v\n%s\n---\n%s", seed, err, filesText(id.Files), filesText(x))
			}
		}
		got := liveIDs(r1.Files)
		tomb := map[string]bool{}
		for _, id := range append(append([]string(nil), o.tomb...), th.tomb...) {
			tomb[id] = true
			if _, ok := got[id]; ok {
				t.Fatalf("seed %d: forgotten %s is back", seed, id)
			}
		}
		for side, m := range []*propMemory{o, th} {
			other := []*propMemory{th, o}[side]
			for _, id := range m.order {
				if _, ok := got[id]; ok || tomb[id] {
					continue
				}
				inOther := false
				for _, x := range other.order {
					inOther = inOther || x == id
				}
				if !inOther && base.text[id] == m.text[id] && base.where[id] == m.where[id] {
					continue // deleted by hand on the other side, untouched here
				}
				t.Fatalf("seed %d: %s lost\n%s", seed, id, filesText(r1.Files))
			}
		}
	}
}
