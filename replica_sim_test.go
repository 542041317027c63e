package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The replica simulation (issue 24): a bare remote and three clones of one
// memory, driven by a seeded scheduler through adds, consolidations, hand
// edits, forgets, confirms, syncs, syncs killed with SIGKILL at a random
// moment and syncs crashed at each write-path failpoint. After quiescence
// (two round-robin passes of sync) it checks:
//   - convergence: every replica and the remote hold the same tree;
//   - nothing lost: every entry that was ever live on a replica is still
//     in the memory (live, archived or pending) unless a forget removed it;
//   - forget wins: no forgotten id and no forgotten text is back;
//   - ids are never reused: no id was minted for two different entries;
//   - the remote only moved forward (its reflog), and no committed memory
//     file holds a conflict marker.
// `make soak-sync` runs it long; `make test` runs a brief one.

var (
	replSeed  = flag.Uint64("replica.seed", 1, "replica simulation: first seed")
	replSeeds = flag.Int("replica.seeds", 2, "replica simulation: number of seeds")
	replSteps = flag.Int("replica.steps", 40, "replica simulation: steps per seed")
	replN     = flag.Int("replica.n", 3, "replica simulation: number of clones")
	replKeep  = flag.Bool("replica.keep", false, "replica simulation: keep the directories of a failed seed and print where")
)

type replicaSim struct {
	t       *testing.T
	bin     string
	rng     *rand.Rand
	root    string
	remote  string
	dirs    []string
	log     []string
	live    map[string]string // id → its text when last seen live (any replica)
	created map[string]string // id → the text it was minted for
	forgot  map[string]string // forgotten id → its text
	forgoer map[string]string // forgotten id → the replica that forgot it
	seed    uint64
	stats   map[string]int // what happened, for the summary line
	final   bool           // quiesced: every replica holds every forget
}

func TestReplicaSimulation(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end simulation skipped in -short mode")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	bin := simBinary(t)
	steps := 0
	start := time.Now()
	total := map[string]int{}
	for seed := *replSeed; seed < *replSeed+uint64(*replSeeds); seed++ {
		sim := newReplicaSim(t, bin, seed)
		for i := 0; i < *replSteps; i++ {
			sim.step(i)
		}
		sim.quiesce()
		sim.check()
		if *replKeep {
			_ = os.RemoveAll(sim.root) // kept only when the seed fails
		}
		steps += *replSteps
		if testing.Verbose() {
			t.Logf("replica simulation: seed %d clean; %d steps so far", seed, steps)
		}
		for k, v := range sim.stats {
			total[k] += v
		}
		total["ids"] += len(sim.created)
		total["forgotten"] += len(sim.forgot)
	}
	t.Logf("replica simulation: %d seeds, %d steps, %d replicas, in %s; %v", *replSeeds, steps, *replN, time.Since(start).Round(time.Millisecond), total)
}

func newReplicaSim(t *testing.T, bin string, seed uint64) *replicaSim {
	root := t.TempDir()
	if *replKeep {
		var err error
		if root, err = os.MkdirTemp("", "memctl-replica-"); err != nil {
			t.Fatal(err)
		}
	}
	s := &replicaSim{seed: seed, t: t, bin: bin, rng: rand.New(rand.NewPCG(seed, 24)), root: root, remote: filepath.Join(root, "remote.git"),
		live: map[string]string{}, created: map[string]string{}, forgot: map[string]string{}, forgoer: map[string]string{}, stats: map[string]int{}}
	s.git(root, "init", "-q", "--bare", "-b", "main", s.remote)
	s.git(s.remote, "config", "core.logAllRefUpdates", "always")
	first := filepath.Join(root, "r0")
	s.memctl(first, "init", first)
	cfg := filepath.Join(first, ".memctl", "config.toml")
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.Replace(b, []byte("[git]\n"), []byte("[git]\nids = \"random\"\n"), 1)
	if !bytes.Contains(b, []byte(`ids = "random"`)) {
		b = append(b, []byte("\n[git]\nids = \"random\"\n")...)
	}
	if err := os.WriteFile(cfg, b, 0o644); err != nil {
		t.Fatal(err)
	}
	s.memctl(first, "consolidate", "--no-llm") // commits the config as a hand edit
	s.git(first, "remote", "add", "origin", s.remote)
	s.memctl(first, "sync", "--machine", "r0")
	s.dirs = []string{first}
	for i := 1; i < *replN; i++ {
		d := filepath.Join(root, fmt.Sprintf("r%d", i))
		s.git(root, "clone", "-q", s.remote, d)
		s.dirs = append(s.dirs, d)
	}
	// The tombstone key, copied out of band (memctl key export | memctl
	// key import) to r1 only: r0 makes its own on its first forget, and
	// the last clone has none (it checks forgotten texts by the public
	// hash, and makes its own key when it forgets).
	if len(s.dirs) > 2 {
		s.memctl(first, "add", "seed fact for the key", "-c", "fact")
		s.memctl(first, "consolidate", "--no-llm")
		seed := ""
		for _, e := range s.entries(first) {
			if e.Content == "seed fact for the key" {
				seed = e.ID
			}
		}
		s.memctl(first, "forget", seed, "--reason", "sim")
		s.memctl(first, "sync", "--machine", "r0")
		s.git(s.dirs[1], "pull", "-q", "--ff-only")
		s.git(s.dirs[2], "pull", "-q", "--ff-only")
		key, err := exec.Command(s.bin, "--dir", first, "key", "export").Output()
		if err != nil {
			t.Fatal(err)
		}
		imp := exec.Command(s.bin, "--dir", s.dirs[1], "key", "import")
		imp.Stdin = bytes.NewReader(key)
		if out, err := imp.CombinedOutput(); err != nil {
			t.Fatalf("key import: %v\n%s", err, out)
		}
	}
	return s
}

func (s *replicaSim) fail(format string, args ...any) {
	s.t.Helper()
	if *replKeep {
		s.t.Logf("replica simulation: kept %s", s.root)
	}
	s.t.Fatalf("replica simulation: seed %d: %s\nsteps:\n  %s\nreplay: go test -run TestReplicaSimulation -replica.seed=%d -replica.seeds=1 -replica.steps=%d -v", s.seed, fmt.Sprintf(format, args...), strings.Join(s.log, "\n  "), s.seed, *replSteps)
}

func (s *replicaSim) git(dir string, args ...string) string {
	s.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		s.fail("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// run runs memctl in a replica and returns its exit code and output.
func (s *replicaSim) run(dir string, env []string, kill time.Duration, args ...string) (code int, stdout, stderr string) {
	ctx := context.Background()
	cmd := exec.CommandContext(ctx, s.bin, append([]string{"--dir", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=Sim", "GIT_AUTHOR_EMAIL=sim@example.com", "GIT_COMMITTER_NAME=Sim",
		"GIT_COMMITTER_EMAIL=sim@example.com", "OPENAI_BASE_URL=", "OPENAI_API_KEY=")
	cmd.Env = append(cmd.Env, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		s.fail("start memctl: %v", err)
	}
	if kill > 0 {
		timer := time.AfterFunc(kill, func() { _ = cmd.Process.Signal(syscall.SIGKILL) })
		defer timer.Stop()
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		s.fail("memctl %s: %v", strings.Join(args, " "), err)
	}
	return code, out.String(), errb.String()
}

func (s *replicaSim) memctl(dir string, args ...string) string {
	s.t.Helper()
	code, out, errs := s.run(dir, nil, 0, args...)
	code, out, errs = s.settle(dir, code, out, errs, args)
	if code != 0 {
		s.fail("memctl %s in %s: exit %d\n%s%s", strings.Join(args, " "), filepath.Base(dir), code, out, errs)
	}
	return out
}

// settle handles the refusal the write path documents: a write committed
// but killed before it updated a file the person then edited, in a way
// that does not merge (docs/FORMAT.md, "The write transaction"). The
// person keeps their edits (memctl recover --keep-edits), and the command
// runs again.
func (s *replicaSim) settle(dir string, code int, out, errs string, args []string) (int, string, string) {
	if code == 0 || !strings.Contains(errs, "memctl recover --keep-edits") {
		return code, out, errs
	}
	s.recoverKeepingEdits(dir, args, errs)
	return s.run(dir, nil, 0, args...)
}

// recoverKeepingEdits runs memctl recover --keep-edits after args were
// refused with errs, and logs it.
func (s *replicaSim) recoverKeepingEdits(dir string, args []string, errs string) {
	s.log = append(s.log, filepath.Base(dir)+" recover --keep-edits (refused: "+strings.Join(args, " ")+": "+firstLines(strings.TrimSpace(errs), 1)+")")
	s.stats["settled"]++
	if c, o, e := s.run(dir, nil, 0, "recover", "--keep-edits"); c != 0 {
		s.fail("recover --keep-edits: exit %d\n%s%s", c, o, e)
	}
}

type simEntry struct {
	ID      string `json:"id"`
	Content string `json:"content"`
	Place   string `json:"place"`
}

func (s *replicaSim) entries(dir string) []simEntry {
	out := s.memctl(dir, "list", "--json")
	var es []simEntry
	if err := json.Unmarshal([]byte(out), &es); err != nil {
		s.fail("list --json: %v\n%s", err, out)
	}
	return es
}

// observe records the entries a replica holds: new ids are minted ones.
func (s *replicaSim) observe(dir string) {
	for _, e := range s.entries(dir) {
		if txt, ok := s.forgot[e.ID]; ok && (s.forgoer[e.ID] == dir || s.final) {
			// the replica that forgot it never sees it again; the others
			// may until they sync
			s.fail("%s: forgotten %s (%q) is back", filepath.Base(dir), e.ID, txt)
		}
		if _, ok := s.created[e.ID]; !ok {
			s.created[e.ID] = rootText(e.Content)
		} else if rootText(e.Content) != s.created[e.ID] {
			s.fail("%s names two entries: %q and %q", e.ID, s.created[e.ID], e.Content)
		}
		s.live[e.ID] = e.Content
	}
}

// rootText is an entry's text without the sim's hand edits (" e<n>",
// " c<n>-<k>").
func rootText(s string) string {
	if loc := simEditSuffix.FindStringIndex(s); loc != nil && strings.HasPrefix(s, "sim fact ") {
		return s[:loc[0]]
	}
	return s
}

var simEditSuffix = regexp.MustCompile(` [ec][0-9]`)

var simFactLine = regexp.MustCompile(`(?m)^- \[(fact-[a-z0-9]+)\] (sim fact [^(]*?) \(`)

func (s *replicaSim) step(i int) {
	r := s.rng.IntN(len(s.dirs))
	dir := s.dirs[r]
	name := filepath.Base(dir)
	kind := []string{"add", "add", "consolidate", "consolidate", "sync", "sync", "sync-kill", "sync-crash", "hand-edit", "forget", "confirm", "re-add", "edit-both"}[s.rng.IntN(13)]
	s.log = append(s.log, fmt.Sprintf("%d %s %s", i, name, kind))
	switch kind {
	case "add":
		s.memctl(dir, "add", fmt.Sprintf("sim fact %d-%d about item %d", i, r, s.rng.IntN(1000)), "-c", "fact")
	case "consolidate":
		s.memctl(dir, "consolidate", "--no-llm")
		s.observe(dir)
	case "sync":
		code, out, errs := s.run(dir, nil, 0, "sync", "--machine", name, "--json")
		code, out, errs = s.settle(dir, code, out, errs, []string{"sync", "--machine", name, "--json"})
		if code != 0 && code != 7 {
			s.fail("%s: sync exit %d\n%s%s", name, code, out, errs)
		}
		var res struct {
			Action string `json:"action"`
			Merge  *struct {
				Conflicts []any `json:"conflicts"`
				Renamed   []any `json:"renamed"`
				Forgotten []any `json:"forgotten"`
			} `json:"merge"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil || res.Action == "" {
			s.fail("%s: sync --json printed no action: %v\n%s", name, err, out)
		}
		s.stats["sync-"+res.Action]++
		if res.Merge != nil {
			s.stats["conflicts"] += len(res.Merge.Conflicts)
			s.stats["renamed"] += len(res.Merge.Renamed)
			s.stats["forgot-by-merge"] += len(res.Merge.Forgotten)
		}
		s.observe(dir)
	case "sync-kill":
		if code, _, _ := s.run(dir, nil, time.Duration(s.rng.IntN(400))*time.Millisecond, "sync", "--machine", name); code == -1 {
			s.stats["killed"]++
		}
	case "sync-crash":
		fp := []string{"txn-staged", "txn-journaled", "txn-committed", "txn-half-files", "txn-files", "txn-indexed"}[s.rng.IntN(6)]
		s.log[len(s.log)-1] += " " + fp
		s.run(dir, []string{"MEMCTL_FAILPOINT=" + fp}, 0, "sync", "--machine", name)
	case "hand-edit":
		// a fact's line, wherever consolidation put it (topics/fact.md;
		// MEMORY.md's Pending for a conflicting edit's variant)
		files, _ := filepath.Glob(filepath.Join(dir, "topics", "*.md"))
		files = append(files, filepath.Join(dir, "MEMORY.md"))
		p := files[s.rng.IntN(len(files))]
		b, err := os.ReadFile(p)
		if err != nil {
			s.fail("%v", err)
		}
		ms := simFactLine.FindAllSubmatchIndex(b, -1)
		if len(ms) == 0 {
			return
		}
		m := ms[s.rng.IntN(len(ms))]
		b = append(b[:m[5]:m[5]], append([]byte(fmt.Sprintf(" e%d", i)), b[m[5]:]...)...)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			s.fail("%v", err)
		}
	case "edit-both":
		// two machines edit the same fact differently before they sync: a
		// conflicting edit for the merge to settle
		other := s.dirs[(r+1+s.rng.IntN(len(s.dirs)-1))%len(s.dirs)]
		p, q := filepath.Join(dir, "topics", "fact.md"), filepath.Join(other, "topics", "fact.md")
		b, err1 := os.ReadFile(p)
		c, err2 := os.ReadFile(q)
		if err1 != nil || err2 != nil {
			return
		}
		var both []string
		for _, m := range simFactLine.FindAllSubmatch(b, -1) {
			if bytes.Contains(c, []byte("["+string(m[1])+"]")) {
				both = append(both, string(m[1]))
			}
		}
		if len(both) == 0 {
			return
		}
		id := both[s.rng.IntN(len(both))]
		for k, f := range []string{p, q} {
			data, _ := os.ReadFile(f)
			re := regexp.MustCompile(`(?m)^(- \[` + regexp.QuoteMeta(id) + `\] sim fact [^(]*?) \(`)
			data = re.ReplaceAll(data, []byte(fmt.Sprintf("${1} c%d-%d (", i, k)))
			if err := os.WriteFile(f, data, 0o644); err != nil {
				s.fail("%v", err)
			}
		}
		s.log[len(s.log)-1] += " " + id + " also on " + filepath.Base(other)
	case "forget":
		es := s.entries(dir)
		var ids []simEntry
		for _, e := range es {
			if strings.HasPrefix(e.ID, "fact-") {
				ids = append(ids, e)
			}
		}
		if len(ids) == 0 {
			return
		}
		e := ids[s.rng.IntN(len(ids))]
		args := []string{"forget", e.ID, "--reason", "sim", "--json"}
		code, out, errs := s.run(dir, nil, 0, args...)
		if code != 0 && strings.Contains(errs, "memctl recover --keep-edits") {
			s.recoverKeepingEdits(dir, args, errs)
			if !slices.ContainsFunc(s.entries(dir), func(x simEntry) bool { return x.ID == e.ID }) {
				s.log[len(s.log)-1] += " (" + e.ID + " gone with the kept edits)"
				return
			}
			code, out, errs = s.run(dir, nil, 0, args...)
		}
		if code != 0 {
			s.fail("memctl %s in %s: exit %d\n%s%s", strings.Join(args, " "), filepath.Base(dir), code, out, errs)
		}
		var res struct {
			EntryIDs []string `json:"entry_ids"`
			SameText []string `json:"same_text_ids"`
			Commit   string   `json:"commit"`
		}
		_ = json.Unmarshal([]byte(out), &res)
		res.EntryIDs = append(res.EntryIDs, res.SameText...)
		// The text forgotten is the one the forget's commit removed: the
		// listing above may be older (a killed write's files are listed
		// from HEAD until the forget's recovery rolls it forward and
		// commits the person's edits; recover --keep-edits keeps theirs).
		removed := map[string]string{}
		for _, l := range strings.Split(s.git(dir, "show", "--format=", res.Commit, "--", "MEMORY.md", "topics"), "\n") {
			if m := simFactLine.FindStringSubmatch(strings.TrimPrefix(l, "-")); strings.HasPrefix(l, "-- [") && m != nil {
				removed[m[1]] = m[2]
			}
		}
		for _, id := range res.EntryIDs {
			txt, ok := removed[id]
			if !ok {
				s.fail("forget %s: its commit %s removes no line of %s", e.ID, res.Commit, id)
			}
			s.forgot[id], s.forgoer[id] = txt, dir
		}
		s.log[len(s.log)-1] += fmt.Sprintf(" %s (listed as %q, forgotten as %q)", strings.Join(res.EntryIDs, ","), e.Content, removed[e.ID])
	case "re-add":
		// an agent adds a forgotten text again, anywhere: refused where the
		// tombstone is known, and never live at the end either way
		var texts []string
		for _, txt := range s.forgot {
			texts = append(texts, txt)
		}
		if len(texts) == 0 {
			return
		}
		sort.Strings(texts)
		txt := texts[s.rng.IntN(len(texts))]
		code, _, _ := s.run(dir, nil, 0, "add", txt, "-c", "fact")
		s.log[len(s.log)-1] += fmt.Sprintf(" %q exit %d", txt, code)
	case "confirm":
		for _, e := range s.entries(dir) {
			if e.Place == "pending" {
				s.memctl(dir, "confirm", e.ID)
				s.log[len(s.log)-1] += " " + e.ID
				break
			}
		}
	}
}

// quiesce syncs every replica in turn, twice, then once more.
func (s *replicaSim) quiesce() {
	for pass := 0; pass < 3; pass++ {
		for _, dir := range s.dirs {
			s.log = append(s.log, "quiesce "+filepath.Base(dir)+" sync")
			code, out, errs := s.run(dir, nil, 0, "sync", "--machine", filepath.Base(dir))
			code, out, errs = s.settle(dir, code, out, errs, []string{"sync", "--machine", filepath.Base(dir)})
			if code != 0 && code != 7 {
				s.fail("quiesce: %s: sync exit %d\n%s%s", filepath.Base(dir), code, out, errs)
			}
		}
	}
}

func (s *replicaSim) check() {
	s.final = true
	want := strings.TrimSpace(s.git(s.remote, "rev-parse", "main^{tree}"))
	for _, dir := range s.dirs {
		if got := strings.TrimSpace(s.git(dir, "rev-parse", "HEAD^{tree}")); got != want {
			s.fail("%s holds tree %s, the remote %s: not converged", filepath.Base(dir), got, want)
		}
		if st := strings.TrimSpace(s.git(dir, "status", "--porcelain")); st != "" {
			s.fail("%s: git status not clean:\n%s", filepath.Base(dir), st)
		}
		s.observe(dir)
	}
	final := map[string]bool{}
	texts := map[string]string{}
	for _, e := range s.entries(s.dirs[0]) {
		final[e.ID] = true
		texts[e.Content] = e.ID
	}
	forgotTexts := map[string]bool{}
	for _, txt := range s.forgot {
		forgotTexts[rootText(txt)] = true
	}
	for id, txt := range s.live {
		if _, gone := s.forgot[id]; gone {
			continue
		}
		if forgotTexts[rootText(txt)] {
			continue // a forgotten text added again where the forget was not known yet: forget wins
		}
		if !final[id] {
			s.fail("%s (%q) was live and is lost", id, txt)
		}
	}
	for id, txt := range s.forgot {
		if holder, back := texts[txt]; back {
			s.fail("the text of forgotten %s (%q) is back, as %s", id, txt, holder)
		}
	}
	// The remote only moved forward.
	lines := strings.Split(strings.TrimSpace(s.git(s.remote, "reflog", "show", "--format=%H", "main")), "\n")
	sort.SliceStable(lines, func(i, j int) bool { return false })
	for i := 0; i+1 < len(lines); i++ {
		newer, older := lines[i], lines[i+1]
		cmd := exec.Command("git", "merge-base", "--is-ancestor", older, newer)
		cmd.Dir = s.remote
		if err := cmd.Run(); err != nil {
			s.fail("the remote moved from %.12s to %.12s, not forward", older, newer)
		}
	}
	// No committed memory file holds a conflict marker.
	for _, f := range strings.Fields(s.git(s.dirs[0], "ls-files")) {
		if f != "MEMORY.md" && !strings.HasPrefix(f, "topics/") {
			continue
		}
		b, _ := os.ReadFile(filepath.Join(s.dirs[0], f))
		if regexp.MustCompile(`(?m)^(<<<<<<< |>>>>>>> |=======$)`).Match(b) {
			s.fail("%s holds a conflict marker", f)
		}
	}
}
