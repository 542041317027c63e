package inject

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestLocomo runs the public LoCoMo dev set when MEMCTL_LOCOMO names it
// (it is never copied into the repository).
func TestLocomo(t *testing.T) {
	dir := os.Getenv("MEMCTL_LOCOMO")
	if dir == "" {
		t.Skip("set MEMCTL_LOCOMO to the locomo-dev folder")
	}
	if v := os.Getenv("MEMCTL_RP"); v != "" {
		p := Rankers["bm25"]
		fmt.Sscanf(v, "%g %g %g %g %d %d %g %g %g", &p.K1, &p.B[0], &p.W[1], &p.W[2], &p.FbDocs, &p.FbTerms, &p.FbWeight, &p.Neighbor, &p.Proximity)
		Rankers["bm25"] = p
		t.Logf("%+v", p)
	}
	if v := os.Getenv("MEMCTL_NW"); v != "" {
		fmt.Sscan(v, &NeighborWindow)
	}
	cases, err := LoadEvalSet(dir)
	if err != nil {
		t.Fatal(err)
	}
	tok := os.Getenv("MEMCTL_TOKENIZER")
	if tok == "" {
		tok = "chars:4"
	}
	cnt, err := NewCounter(tok)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Eval(context.Background(), dir, cases, EvalOptions{
		Budgets: []int{250, 500, 1000}, TopKs: []int{5, 10, 25},
		Rankers: []string{"bm25-plain", "bm25"}, Counter: cnt, ContentOnly: os.Getenv("MEMCTL_BLOCK") == "",
		Base: Options{L2Reserve: 0.25, CoreMaxLines: 200, CoreMaxBytes: 25600},
	})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	rep.WriteText(&b)
	t.Log("\n" + b.String())
}
