package inject

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/memctl/memctl/consolidate/fakellm"
	"github.com/memctl/memctl/mdmem"
	"github.com/memctl/memctl/mdmem/vector"
)

func docs(hs []Hit) []int {
	out := make([]int, len(hs))
	for i, h := range hs {
		out[i] = h.Doc
	}
	return out
}

func hitsOf(ds ...int) []Hit {
	out := make([]Hit, len(ds))
	for i, d := range ds {
		out[i] = Hit{Doc: d, Score: float64(len(ds) - i)}
	}
	return out
}

func TestFuse(t *testing.T) {
	all := func(ds ...int) map[int]bool {
		m := map[int]bool{}
		for _, d := range ds {
			m[d] = true
		}
		return m
	}
	tests := []struct {
		name       string
		lex, dense []Hit
		has        map[int]bool
		want       []int
	}{
		{"no vectors: the lexical order", hitsOf(3, 1, 2), nil, nil, []int{3, 1, 2}},
		{"no lexical hit: the dense order", nil, hitsOf(5, 4), all(4, 5), []int{5, 4}},
		{"agreeing lists", hitsOf(1, 2, 3), hitsOf(1, 2, 3), all(1, 2, 3), []int{1, 2, 3}},
		// 2: 1/62+1/61 beats 1: 1/61 (1 has a vector the task is far from)
		{"dense lifts the second", hitsOf(1, 2), hitsOf(2), all(1, 2), []int{2, 1}},
		// 1 has no vector: its lexical rank counts twice, 2/61 > 1/62+1/61
		{"a missing vector is not a penalty", hitsOf(1, 2), hitsOf(2), all(2), []int{1, 2}},
		// a dense-only entry ranks by its dense rank alone: 1/61 < 1/62+1/63
		{"dense-only entry after entries both lists found", hitsOf(1, 2), hitsOf(7, 1, 2), all(1, 2, 7), []int{1, 2, 7}},
		// 3 is last by words, first by meaning: 1/63+1/61 > 1/62+1/63
		{"dense lifts a weak lexical hit", hitsOf(1, 2, 3), hitsOf(3, 1), all(1, 2, 3), []int{1, 3, 2}},
		// 1 and 2 swap ranks: equal fused scores, the better lexical rank wins
		{"tie: better lexical rank first", hitsOf(1, 2), hitsOf(2, 1), all(1, 2), []int{1, 2}},
		// two entries only in the lexical list, both without vectors, equal
		// rank impossible; dense-only entries at equal dense ranks
		// impossible: duplicates in a list count once
		{"duplicates count once", []Hit{{Doc: 1}, {Doc: 1}, {Doc: 2}}, []Hit{{Doc: 2}, {Doc: 2}}, all(1, 2), []int{2, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fuse(tt.lex, tt.dense, tt.has)
			if !reflect.DeepEqual(docs(got), tt.want) {
				t.Fatalf("fuse = %v, want %v", docs(got), tt.want)
			}
			for i := 1; i < len(got); i++ {
				if got[i].Score > got[i-1].Score {
					t.Fatalf("scores not descending: %v", got)
				}
			}
		})
	}
}

func TestUnitAndDecode(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	tests := []struct {
		name string
		v    []float32
		ok   bool
	}{
		{"plain", []float32{3, 4}, true},
		{"negative", []float32{-1, 0, 0}, true},
		{"huge but finite", []float32{math.MaxFloat32, math.MaxFloat32}, true},
		{"empty", nil, false},
		{"zero", []float32{0, 0, 0}, false},
		{"NaN", []float32{1, nan}, false},
		{"infinity", []float32{inf, 1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := vector.Unit(tt.v)
			if (u != nil) != tt.ok {
				t.Fatalf("Unit(%v) = %v, want usable %v", tt.v, u, tt.ok)
			}
			if u != nil {
				var n float64
				for _, x := range u {
					n += float64(x) * float64(x)
				}
				if math.Abs(n-1) > 1e-6 {
					t.Fatalf("|Unit(%v)|² = %v", tt.v, n)
				}
			}
			_, err := NewDense(tt.v, nil)
			if (err == nil) != tt.ok {
				t.Fatalf("NewDense(%v) error %v, want usable %v", tt.v, err, tt.ok)
			}
		})
	}
}

func TestVectorCache(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if v, err := ReadVectors(dir); err != nil || v.Len() != 0 {
		t.Fatalf("no cache: %v, %v", v, err)
	}
	// Vectors of another length than the first (in key order) are left
	// out: the cache holds one length.
	if err := WriteVectors(ctx, dir, "m", map[string][]float32{"x": {1, 2}, "y": {1, 2, 3}}); err != nil {
		t.Fatal(err)
	}
	if v, err := ReadVectors(dir); err != nil || v.Len() != 1 || v.Dims() != 2 && v.Dims() != 3 {
		t.Fatalf("mixed lengths: %d vectors of %d, %v", v.Len(), v.Dims(), err)
	}
	nan, inf := float32(math.NaN()), float32(math.Inf(-1))
	in := map[string][]float32{"a": {3, 4}, "b": {0, 2}, "nan": {nan, 1}, "inf": {inf, 1}, "zero": {0, 0}, "": {1, 0}}
	if err := WriteVectors(ctx, dir, "m", in); err != nil {
		t.Fatal(err)
	}
	v, err := ReadVectors(dir)
	if err != nil {
		t.Fatal(err)
	}
	if v.Model != "m" || v.Dims() != 2 || v.Len() != len(in) {
		t.Fatalf("model %q, %d vectors of %d", v.Model, v.Len(), v.Dims())
	}
	for text, want := range map[string][]float32{"a": {0.6, 0.8}, "b": {0, 1}, "": {1, 0}, "nan": nil, "inf": nil, "zero": nil, "missing": nil} {
		if got := v.Lookup(text); !reflect.DeepEqual(got, want) {
			t.Errorf("Lookup(%q) = %v, want %v", text, got, want)
		}
	}
	good, _ := mdmem.ReadCacheFile(dir, VectorCacheFile)
	for name, b := range map[string][]byte{
		"garbage":       []byte("{\"model\": \"m\", \"vectors\": {"),
		"truncated":     good[:len(good)-1],
		"one more byte": append(append([]byte(nil), good...), 0),
		"header only":   good[:10],
		"huge model":    append([]byte(vecMagic), 0xff, 0xff, 0xff, 0xff),
	} {
		if err := mdmem.WriteCacheFile(ctx, dir, VectorCacheFile, b); err != nil {
			t.Fatal(err)
		}
		if v, err := ReadVectors(dir); err == nil || v.Len() != 0 {
			t.Errorf("%s: read %d vectors, error %v", name, v.Len(), err)
		}
	}
}

func TestEmbedText(t *testing.T) {
	long := strings.Repeat("é", MaxEmbedBytes) // 2 bytes a rune
	got := EmbedText(" x" + long)
	if len(got) > MaxEmbedBytes || !strings.HasPrefix(got, "xé") || !strings.HasSuffix(got, "é") {
		t.Fatalf("EmbedText cut badly: %d bytes, ends %q", len(got), got[len(got)-4:])
	}
	if got := EmbedText("  a task \n"); got != "a task" {
		t.Fatalf("EmbedText = %q", got)
	}
}

// denseMem: the wake-up entry shares no word with the task "when does the
// morning buzzer ring"; a concept axis (vectors below) links them.
const denseMain = `# Core profile

## User preferences

- [pref-001] Answers in English, short (user_explicit · 2025-01-05)

# Topic index

- Home → topics/home.md
`

const denseHome = `# Home

- [fact-001] Alex's alarm is set for 6:15 on weekdays (user_explicit · 2025-03-01)
- [fact-002] The thermostat stays at 19 degrees in winter (user_explicit · 2025-03-01)
- [fact-003] Bins go out on Thursday evenings; the morning collection is early (user_explicit · 2025-03-01)
- [fact-004] The front door buzzer battery was replaced (user_explicit · 2025-03-01)
`

func TestInjectDense(t *testing.T) {
	c := loadMem(t, map[string]string{"MEMORY.md": denseMain, "topics/home.md": denseHome})
	cnt, _ := NewCounter("chars:4")
	// 4 dimensions: alarm/wake-up, heating, bins, door.
	vec := map[string][]float32{
		"fact-001": {1, 0, 0, 0.1},
		"fact-002": {0, 1, 0, 0},
		"fact-003": {0.2, 0, 1, 0},
		"fact-004": {0, 0, 0, 1},
		"pref-001": {0, 0.1, 0, 0},
	}
	cache := func(f func(id string, v []float32) []float32) *Vectors {
		m := map[string][]float32{}
		for i := range c.Len() {
			n := c.Note(i)
			if v, ok := vec[n.ID]; ok {
				if v = f(n.ID, v); v != nil {
					m[n.Content] = v
				}
			}
		}
		dir := t.TempDir()
		if err := WriteVectors(context.Background(), dir, "m", m); err != nil {
			t.Fatal(err)
		}
		vs, err := ReadVectors(dir)
		if err != nil {
			t.Fatal(err)
		}
		return vs
	}
	same := func(_ string, v []float32) []float32 { return v }
	task := "when does the morning buzzer ring"
	query := []float32{0.9, 0, 0, 0.3}
	run := func(d *Dense) *Result {
		t.Helper()
		r, err := Inject(c, Options{Task: task, Budget: 2000, L2Reserve: 0.25, TopK: 3, Counter: cnt, Dense: d})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	ids := func(r *Result) []string {
		var out []string
		for _, it := range r.Items {
			out = append(out, it.Note.Ref())
		}
		return out
	}
	mustDense := func(q []float32, m *Vectors) *Dense {
		d, err := NewDense(q, m)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	lexical := run(nil)
	if got := ids(lexical); !reflect.DeepEqual(got, []string{"pref-001", "fact-004", "fact-003", "fact-002"}) {
		t.Fatalf("by words: %v, want fact-001 out of the top 3", got)
	}

	// By words (feedback gives the last two a little weight):
	// fact-004, fact-003, fact-002, fact-001. By meaning: fact-001,
	// fact-004, fact-003 (fact-002 is orthogonal). Fused (1/(60+rank)
	// per list; twice the lexical term without a vector), top 3 shown.
	tests := []struct {
		name  string
		d     *Dense
		want  []string
		warns int
	}{
		// 004 1/61+1/62, 001 1/64+1/61, 003 1/62+1/63, 002 1/63
		{"every vector", mustDense(query, cache(same)), []string{"pref-001", "fact-004", "fact-001", "fact-003"}, 0},
		// 004 2/61, 003 2/62, 001 (no vector) 2/64, 002 1/63
		{"the target's vector missing", mustDense(query, cache(func(id string, v []float32) []float32 {
			if id == "fact-001" {
				return nil
			}
			return v
		})), []string{"pref-001", "fact-004", "fact-003", "fact-001"}, 0},
		// a NaN and a zero vector count as none: 004 2/61, 003 2/62,
		// 002 2/63, 001 2/64
		{"NaN and zero vectors count as none", mustDense(query, cache(func(id string, v []float32) []float32 {
			switch id {
			case "fact-001":
				return []float32{float32(math.NaN()), 0, 0, 1}
			case "fact-002":
				return []float32{0, 0, 0, 0}
			}
			return v
		})), []string{"pref-001", "fact-004", "fact-003", "fact-002"}, 0},
		{"task vector of another length: words only, with a warning", mustDense([]float32{1, 0, 0}, cache(same)), ids(lexical), 1},
		{"empty cache: words only, with a warning", mustDense(query, nil), ids(lexical), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(tt.d)
			if got := ids(r); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("items %v, want %v (lexical: %v)", got, tt.want, ids(lexical))
			}
			if len(r.Warnings) != tt.warns {
				t.Fatalf("warnings %q, want %d", r.Warnings, tt.warns)
			}
			if r.UsedTokens > r.Budget {
				t.Fatalf("used %d of %d", r.UsedTokens, r.Budget)
			}
			if r.Items[0].Tier != TierCore {
				t.Fatalf("the core is not first: %v", r.Items)
			}
		})
	}
	// The core is unaffected by embeddings.
	noTask, _ := Inject(c, Options{Budget: 2000, L2Reserve: 0.25, Counter: cnt, Dense: mustDense(query, cache(same))})
	if got := ids(noTask); !reflect.DeepEqual(got, []string{"pref-001"}) {
		t.Fatalf("without a task: %v", got)
	}
}

// BenchmarkInjectDense is BenchmarkInject10k (and 1k topic entries)
// by words and with embeddings: each dense iteration also reads a vector
// cache of every note (768 dimensions) and fuses the rankings, as memctl
// inject does (the embedding call aside).
func BenchmarkInjectDense(b *testing.B) {
	for _, topic := range []int{1000, 10000} {
		for _, dense := range []bool{false, true} {
			b.Run(fmt.Sprintf("%dk-%s", topic/1000, map[bool]string{false: "words", true: "dense"}[dense]), func(b *testing.B) {
				benchDense(b, topic, dense)
			})
		}
	}
}

func benchDense(b *testing.B, topic int, dense bool) {
	dir := benchMemory(b, topic)
	ctx := context.Background()
	o := Options{Budget: 4000, L2Reserve: 0.25, CoreMaxLines: 200, CoreMaxBytes: 25600, TopK: 8, Counter: o200k(b), StaleDays: 90,
		Now: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), Task: "fix the slow report api timeout"}
	c, err := LoadCorpusFor(ctx, dir, true, o.Counter)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	vec := func() []float32 {
		v := make([]float32, 768)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return vector.Unit(v)
	}
	vs := map[string][]float32{}
	for i := range c.Len() {
		vs[c.Note(i).Content] = vec()
	}
	if err := WriteVectors(ctx, dir, "bench", vs); err != nil {
		b.Fatal(err)
	}
	query := vec()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c, err := LoadCorpusFor(ctx, dir, true, o.Counter)
		if err != nil {
			b.Fatal(err)
		}
		if dense {
			f, err := ReadVectors(dir)
			if err != nil {
				b.Fatal(err)
			}
			if o.Dense, err = NewDense(query, f); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := Inject(c, o); err != nil {
			b.Fatal(err)
		}
	}
}

// TestLocomoDense runs the public LoCoMo dev set (MEMCTL_LOCOMO names it)
// with offline embeddings, to measure what fusion does to recall; it
// cannot measure a real model. MEMCTL_DENSE=fake: the fake server's
// vectors (hashed bags of words: a second, weaker lexical ranking, not
// meaning); MEMCTL_DENSE=oracle: vectors built from the gold evidence (a
// memory's refs, a query's evidence ids), a perfect dense ranking, so an
// upper bound of what fusion keeps of it.
func TestLocomoDense(t *testing.T) {
	dir, mode := os.Getenv("MEMCTL_LOCOMO"), os.Getenv("MEMCTL_DENSE")
	if dir == "" || mode == "" {
		t.Skip("set MEMCTL_LOCOMO to the locomo-dev folder and MEMCTL_DENSE to fake or oracle")
	}
	cases, err := LoadEvalSet(dir)
	if err != nil {
		t.Fatal(err)
	}
	gold := map[string][]string{} // text → refs or evidence
	for _, c := range cases {
		for _, m := range c.Memories {
			gold[strings.TrimSpace(m.Content)] = m.Refs
		}
		for _, q := range c.Queries {
			gold[EmbedText(q.Task)] = q.Evidence
		}
	}
	missed := 0
	embed := func(_ context.Context, texts []string) ([][]float32, error) {
		out := make([][]float32, len(texts))
		for i, text := range texts {
			switch mode {
			case "fake":
				out[i] = fakellm.Vector(text, nil)
			case "oracle":
				refs, ok := gold[strings.TrimSpace(text)]
				if !ok {
					missed++
				}
				v := make([]float32, 4096)
				v[0] = 1e-3 // no text is without a direction
				for _, r := range refs {
					h := fnv.New32a()
					h.Write([]byte(r))
					v[1+h.Sum32()%4095]++
				}
				out[i] = v
			default:
				return nil, fmt.Errorf("MEMCTL_DENSE=%s: want fake or oracle", mode)
			}
		}
		return out, nil
	}
	cnt, err := NewCounter("chars:4")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Eval(context.Background(), dir, cases, EvalOptions{
		Budgets: []int{250, 500, 1000}, TopKs: []int{5, 10, 25}, Rankers: []string{"bm25"}, Counter: cnt, ContentOnly: true,
		Base: Options{L2Reserve: 0.25, CoreMaxLines: 200, CoreMaxBytes: 25600}, Embed: embed,
	})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	rep.WriteText(&b)
	t.Logf("MEMCTL_DENSE=%s (%d texts without gold)\n%s", mode, missed, b.String())
}
