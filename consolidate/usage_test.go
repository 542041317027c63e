package consolidate

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memctl/memctl/mdmem"
)

// prefMemory is a core profile of n preferences, all alike in value
// (same confidence, category and date): without usage, volume control
// demotes the lowest ids first.
func prefMemory(n int) string {
	var b strings.Builder
	b.WriteString("# Core profile\n\n## User preferences\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "- [%s] The user likes option number %d in configuration files of project alpha (user · 2025-06-01)\n", mdmem.FormatID("pref", i), i)
	}
	b.WriteString("\n## Pending confirmation\n\n# Topic index\n\n# Archive\n")
	return b.String()
}

func TestValueUsage(t *testing.T) {
	e := &mdmem.Entry{ID: "pref-001", Category: "preference", Created: testNow.AddDate(-2, 0, 0)}
	none := value(e, Use{}, testNow)
	recent := value(e, Use{Count: 1, Weight: 1, Last: testNow.AddDate(0, 0, -1)}, testNow)
	old := value(e, Use{Count: 1, Weight: 0.01, Last: testNow.AddDate(-1, -6, 0)}, testNow)
	many := value(e, Use{Count: 30, Weight: 25, Last: testNow}, testNow)
	if !(none < old && old < recent && recent < many) {
		t.Fatalf("values none %.2f old %.2f recent %.2f many %.2f", none, old, recent, many)
	}
	// A used preference outranks an unused constraint of the same age.
	c := &mdmem.Entry{ID: "cons-001", Category: "constraint", Created: e.Created}
	if u := value(e, Use{Count: 5, Weight: 5, Last: testNow.AddDate(0, 0, -3)}, testNow); u <= value(c, Use{}, testNow) {
		t.Fatalf("used preference %.2f <= unused constraint %.2f", u, value(c, Use{}, testNow))
	}
}

func TestUsageFromLog(t *testing.T) {
	recs := []mdmem.UsageRecord{
		{Kind: "inject", Time: testNow, IDs: []string{"pref-001", "pref-002"}}, // exposure, not use
		{Kind: "used", Time: testNow.Add(-usageHalfLife), IDs: []string{"pref-001", "pref-001", ""}},
		{Kind: "used", Time: testNow.Add(time.Hour), IDs: []string{"pref-001"}}, // future: counts as now
	}
	var info UsageInfo
	u := usageFrom(recs, testNow, &info)
	if got := u["pref-001"]; got.Count != 2 || got.Weight < 1.49 || got.Weight > 1.51 || !got.Last.Equal(testNow) {
		t.Fatalf("pref-001 %+v", got)
	}
	if _, ok := u["pref-002"]; ok || info.Records != 2 || info.Entries != 1 {
		t.Fatalf("usage %+v info %+v", u, info)
	}
}

// TestDemotionKeepsUsedEntries: the entries the agent reports using stay
// in the core when volume control must move some out.
func TestDemotionKeepsUsedEntries(t *testing.T) {
	m := loadMem(t, map[string]string{"MEMORY.md": prefMemory(150)})
	cfg := testConfig()
	cfg.Consolidate.CoreMaxTokens = 2000
	used := map[string]Use{}
	for i := 1; i <= 10; i++ {
		used[mdmem.FormatID("pref", i)] = Use{Count: 3, Weight: 2.5, Last: testNow.AddDate(0, 0, -2)}
	}
	plan := func(u map[string]Use) (*Plan, string) {
		p, err := Compute(wired(&Input{Mem: m, Config: cfg, Now: testNow, Usage: u}))
		if err != nil {
			t.Fatal(err)
		}
		return p, string(p.Files["topics/preference.md"])
	}
	p0, topic0 := plan(nil)
	if p0.Count(OpDemote) == 0 || !strings.Contains(topic0, "[pref-001]") {
		t.Fatalf("without usage the lowest ids go first; demoted %d:\n%s", p0.Count(OpDemote), topic0)
	}
	p1, topic1 := plan(used)
	if p1.Count(OpDemote) != p0.Count(OpDemote) {
		t.Fatalf("demoted %d with usage, %d without", p1.Count(OpDemote), p0.Count(OpDemote))
	}
	for id := range used {
		if strings.Contains(topic1, "["+id+"]") {
			t.Errorf("used entry %s was demoted", id)
		}
	}
	if lim := CoreLimits(cfg); lim.over(p1.CoreAfter) {
		t.Fatalf("core %v over %v", p1.CoreAfter, lim)
	}
}

// TestRunReadsInjectLog: a run reads `memctl used` records from the inject
// log, skipping unreadable lines, and keeps the used entries in the core.
func TestRunReadsInjectLog(t *testing.T) {
	dir := newRepo(t, prefMemory(150), "[consolidate]\ncore_max_tokens = 2000\n")
	for _, id := range []string{"pref-001", "pref-002", "pref-003"} {
		if err := mdmem.AppendUsageLog(dir, mdmem.UsageRecord{Kind: "used", Time: testNow.Add(-time.Hour), IDs: []string{id}}); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.OpenFile(filepath.Join(dir, filepath.FromSlash(mdmem.InjectLogPath)), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString("not json\n{\"kind\":\"used\",\"ids\":[\"pref-004\"")
	f.Close()
	rep := run(t, dir, Options{NoLLM: true})
	if rep.Usage == nil || rep.Usage.Records != 3 || rep.Usage.Unreadable != 2 || rep.Summary.Demoted == 0 {
		t.Fatalf("usage %+v summary %+v", rep.Usage, rep.Summary)
	}
	topic := readFile(t, dir, "topics/preference.md")
	for _, id := range []string{"pref-001", "pref-002", "pref-003"} {
		if strings.Contains(topic, "["+id+"]") {
			t.Errorf("used %s demoted", id)
		}
	}
	if !strings.Contains(topic, "[pref-004]") {
		t.Errorf("pref-004 (torn line, not counted) should have been demoted:\n%s", topic)
	}
	if st := git(t, dir, "status", "--porcelain"); st != "" {
		t.Fatal(st)
	}
}
