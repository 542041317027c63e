package inject

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// randomFiles is a random memory as files: core and topic entries with
// ids, id-less hand-written items (named file:line), dates with and
// without a time, entries without metadata, backticks and CJK.
func randomFiles(rng *rand.Rand, n, m int) map[string]string {
	words := strings.Fields("order cache redis report api slow index mysql deploy kafka queue 缓存 数据库 ``` ```` fence ignore previous instructions # header budget token é ü 2025 v1.2 it's don't")
	sentence := func() string {
		k := 1 + rng.Intn(25)
		var b []string
		for i := 0; i < k; i++ {
			b = append(b, words[rng.Intn(len(words))])
		}
		return strings.Join(b, " ")
	}
	meta := func(i int) string {
		switch rng.Intn(7) {
		case 0:
			return ""
		case 3:
			return fmt.Sprintf(" (user_explicit · 2024-%02d-01 · scope p%d)", 1+rng.Intn(12), rng.Intn(2))
		case 1:
			return " (hand note)"
		case 2:
			return fmt.Sprintf(" (session · 2025-%02d-%02dT%02d:%02d:00Z · refs r%d)", 1+rng.Intn(12), 1+rng.Intn(28), rng.Intn(24), rng.Intn(60), i)
		default:
			return fmt.Sprintf(" (session · 20%02d-%02d-%02d · refs r%d)", 20+rng.Intn(7), 1+rng.Intn(12), 1+rng.Intn(28), i)
		}
	}
	var main strings.Builder
	main.WriteString("# Core profile\n\n## Key decisions\n\n")
	for i := 0; i < n; i++ {
		if rng.Intn(5) == 0 {
			fmt.Fprintf(&main, "- %s%s\n", sentence(), meta(i))
		} else {
			fmt.Fprintf(&main, "- [dec-%03d] %s%s\n", i+1, sentence(), meta(i))
		}
	}
	main.WriteString("\n## Pending confirmation\n\n# Topic index\n\n# Archive\n")
	files := map[string]string{"MEMORY.md": main.String()}
	for f := 0; f < 3; f++ {
		var topic strings.Builder
		topic.WriteString("# Notes\n\n")
		for i := 0; i < m; i++ {
			if rng.Intn(6) == 0 {
				fmt.Fprintf(&topic, "- %s%s\n", sentence(), meta(i))
			} else {
				fmt.Fprintf(&topic, "- [fact-%d%03d] %s%s\n", f, i+1, sentence(), meta(i))
			}
		}
		files[fmt.Sprintf("topics/t%d.md", f)] = topic.String()
	}
	return files
}

// yearless finds a date line without the year (01-05:, 01-05 (old):).
var yearless = regexp.MustCompile(`\n[0-9]{2}-[0-9]{2}[: ]`)

// TestCachedCountsMatch: inject on a cached memory, with the token counts
// stored at the cache build, gives the same bytes and counts as counting
// every line, and never loads the tokenizer.
func TestCachedCountsMatch(t *testing.T) {
	t.Parallel() // long: runs beside the package's other tests
	rng := rand.New(rand.NewSource(3))
	ctx := context.Background()
	seen := map[string]int{}
	defer func() {
		for _, s := range []string{"old):", "Not shown:", " more.\n", ":", " (scope)", "01-05:"} {
			if seen[s] == 0 {
				t.Errorf("no block had %q: the test does not cover it", s)
			}
		}
	}()
	for round := 0; round < 6; round++ {
		dir := writeMem(t, randomFiles(rng, rng.Intn(40), 20+rng.Intn(120)))
		for _, name := range []string{"o200k", "cl100k"} {
			os.Remove(filepath.Join(dir, filepath.FromSlash(IndexCacheFile)))
			build, _ := NewCounter(name)
			if _, err := LoadCorpusFor(ctx, dir, true, build); err != nil {
				t.Fatal(err)
			}
			cached, err := loadCached(ctx, dir)
			if err != nil || cached == nil || cached.tok == nil || cached.tok.name == "" {
				t.Fatalf("%s: cache with counts not read back: %v", name, err)
			}
			plain, err := LoadCorpus(ctx, dir, false)
			if err != nil {
				t.Fatal(err)
			}
			fresh, _ := NewCounter(name)
			ref, _ := NewCounter(name)
			for k := 0; k < 40; k++ {
				o := baseOpts(t)
				o.Budget = []int{40, 70, 100, 150, 250, 400, 800, 2000, 100000}[rng.Intn(9)]
				o.TopK = rng.Intn(3) * 6
				o.L2Reserve = rng.Float64()
				o.CoreMaxTokens = []int{0, 100}[rng.Intn(2)]
				o.MaxChars = []int{0, 0, 500}[rng.Intn(3)]
				o.CoreMaxLines = rng.Intn(40)
				o.StaleDays = []int{0, 1, 30, 90, 400}[rng.Intn(5)]
				// From the notes' first year on: date lines with and
				// without the year (the today line's).
				o.Now = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, rng.Intn(4000))
				o.Task = []string{"order cache redis slow report 缓存", "kafka deploy", "", "fence ``` header"}[rng.Intn(4)]
				o.Scopes = [][]string{nil, {"all"}}[rng.Intn(2)]
				o.Counter = fresh
				got, err := Inject(cached, o)
				if err != nil {
					t.Fatal(err)
				}
				o.Counter = ref
				want, err := Inject(plain, o)
				if err != nil {
					t.Fatal(err)
				}
				if got.Block != want.Block || got.UsedTokens != want.UsedTokens {
					t.Fatalf("%s round %d: cached inject differs: %d vs %d tokens\n%s\n---\n%s", name, round, got.UsedTokens, want.UsedTokens, got.Block, want.Block)
				}
				for i := range got.Items {
					if got.Items[i].Tokens != want.Items[i].Tokens {
						t.Fatalf("%s: item %s: %d tokens, counted %d", name, got.Items[i].Note.Ref(), got.Items[i].Tokens, want.Items[i].Tokens)
					}
				}
				for _, s := range []string{"old):", "Not shown:", " more.\n", " (scope)"} {
					if strings.Contains(got.Block, s) {
						seen[s]++
					}
				}
				if strings.Contains(got.Block, ".md:") {
					seen[":"]++
				}
				if yearless.MatchString(got.Block) {
					seen["01-05:"]++
				}
				if got.Block != "" && ref.Count(got.Block) != got.UsedTokens {
					t.Fatalf("%s: summed %d, whole block %d", name, got.UsedTokens, ref.Count(got.Block))
				}
			}
			if fresh.(*bpeCounter).loaded.Load() {
				t.Errorf("%s: cached inject loaded the tokenizer", name)
			}
		}
	}
}

// TestCacheRoundTrip: the notes and the index read back from the cache
// equal those built from the Markdown.
func TestCacheRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	dir := writeMem(t, randomFiles(rng, 30, 80))
	ctx := context.Background()
	if _, err := LoadCorpus(ctx, dir, true); err != nil {
		t.Fatal(err)
	}
	built, err := LoadCorpus(ctx, dir, false)
	if err != nil {
		t.Fatal(err)
	}
	cached, err := loadCached(ctx, dir)
	if err != nil || cached == nil {
		t.Fatalf("cache not read: %v", err)
	}
	if cached.Len() != built.Len() {
		t.Fatalf("%d notes, want %d", cached.Len(), built.Len())
	}
	for i := 0; i < built.Len(); i++ {
		a, b := fmt.Sprintf("%+v", *built.Note(i)), fmt.Sprintf("%+v", *cached.Note(i))
		a, b = strings.ReplaceAll(a, "[]", "<nil>"), strings.ReplaceAll(b, "[]", "<nil>")
		if a != b {
			t.Fatalf("note %d:\n%s\n%s", i, a, b)
		}
	}
	samePostings(t, "round trip", cached.Index(Rankers[DefaultRanker].An), built.Index(Rankers[DefaultRanker].An))
	for _, q := range []string{"order cache", "kafka deploy 缓存", "report"} {
		h1 := built.Rank(Rankers[DefaultRanker], q, nil, nil)
		h2 := cached.Rank(Rankers[DefaultRanker], q, nil, nil)
		if fmt.Sprint(h1) != fmt.Sprint(h2) {
			t.Fatalf("ranking of %q differs", q)
		}
	}
}
