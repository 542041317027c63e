package inject

import "sort"

// A step after BM25F, feedback, proximity and dates: names the task
// mentions matched to the topics notes are filed under (docs/INJECT.md,
// "Ranking").

// taskEntities returns the index terms of the names a task mentions:
// words written with a capital letter ("Caroline", "Postgres", "LGBTQ")
// that do not begin a sentence (where any word is capitalised) and are
// not stop words. Only terms the index knows are kept, once each.
func taskEntities(ix *Index, task string) []int32 {
	var out []int32
	for _, name := range taskNames(task) {
		for _, t := range ix.An.Terms(nil, name) {
			if id, ok := ix.lookup(t); ok && !containsID(out, id) {
				out = append(out, id)
			}
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a] < out[b] })
	return out
}

func containsID(l []int32, id int32) bool {
	for _, x := range l {
		if x == id {
			return true
		}
	}
	return false
}

// boostEntities raises the notes that already match the task and are
// filed under a topic (slug, description or keywords) that a name in the
// task names, by a share of the best score times the share of the
// task's names they match (RankParams.Entities: share). It reads only the names' postings.
func (ix *Index) boostEntities(task string, share float64, scores []float64) {
	ents := taskEntities(ix, task)
	if len(ents) == 0 {
		return
	}
	top := 0.0
	for _, s := range scores {
		top = max(top, s)
	}
	if top <= 0 {
		return
	}
	w := share * top / float64(len(ents))
	for _, t := range ents {
		for r := range ix.runs(t) {
			sc := scores[r.base:]
			for k, d := range r.doc {
				if r.tf[fieldTopic][k] > 0 && sc[d] > 0 {
					sc[d] += w
				}
			}
		}
	}
}
