package consolidate

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/memctl/memctl/consolidate/fakellm"
)

func TestConflictPendingConfirm(t *testing.T) {
	dir, _ := ambiguousSetup(t, "")
	comp := completerFunc(func(ctx context.Context, r Request) (Response, error) {
		var ops []string
		ids := map[string]int{}
		for _, it := range fakellm.ParseItems(r.User) {
			ids[it.Kind+":"+strings.Fields(it.Text)[1]] = it.ID
		}
		for _, svc := range []string{"order", "billing", "search"} {
			ops = append(ops, fmt.Sprintf(`{"op":"conflict","target":%d,"sources":[%d],"text":"","category":"","reason":"which cache?"}`, ids["entry:"+svc], ids["candidate:"+svc]))
		}
		return Response{Text: `{"operations":[` + strings.Join(ops, ",") + `]}`}, nil
	})
	rep := run(t, dir, Options{Completer: comp})
	if rep.Summary.Conflicts != 3 {
		t.Fatalf("%+v %+v", rep.Summary, rep.Plan.Held)
	}
	s := open(t, dir)
	m, _ := s.Load(context.Background())
	p := Pending(m)
	if len(p) != 3 || !strings.Contains(strings.Join(p[0].Why, ";"), "conflicts with dec-001") {
		t.Fatalf("pending %+v", p)
	}
	r, err := Confirm(context.Background(), s, p[0].ID, "", false, testNow)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Archived) != 1 || r.Archived[0] != "dec-001" {
		t.Fatalf("%+v", r)
	}
	main := readFile(t, dir, "MEMORY.md")
	if !strings.Contains(main, "superseded by "+p[0].ID) || !strings.Contains(main, "confirmed by user") {
		t.Fatalf("%s", main)
	}
	if _, err := Reject(context.Background(), open(t, dir), p[1].ID, "wrong", testNow); err != nil {
		t.Fatal(err)
	}
	if _, err := Confirm(context.Background(), open(t, dir), "dec-002", "", false, testNow); err == nil {
		t.Fatal("confirm of a non-pending entry succeeded")
	}
	m, _ = open(t, dir).Load(context.Background())
	if n := len(Pending(m)); n != 1 {
		t.Fatalf("%d pending left", n)
	}
	if st := git(t, dir, "status", "--porcelain"); st != "" {
		t.Fatal(st)
	}
}
