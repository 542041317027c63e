package consolidate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/memctl/memctl/mdmem"
)

// AttemptsPath records, per queued candidate, how many runs failed on it.
// It lives in the git-ignored cache and is rewritten atomically at the end
// of a run (after its commit). It is derived data: losing it (a crash
// before the write, the cache deleted) only grants a candidate more runs;
// it never decides what is consumed, the ledger does.
//
// Why not count in the queue file itself: queue files are the producers'
// (memctl add, import) and a person's to edit, and each entry is keyed by
// the hash of the candidate, so editing a held candidate gives it fresh
// attempts; rewriting queue files would also race with a person editing
// one.
const AttemptsPath = mdmem.AttemptsPath

// attemptsName is AttemptsPath's name inside the cache directory.
var attemptsName = path.Base(AttemptsPath)

// HeldDir is where candidates that can never be entries (a secret,
// invalid) go after consolidate.max_attempts failed runs
// (mdmem.HeldQueueDir).
const HeldDir = mdmem.HeldQueueDir

type attemptRec struct {
	Hash   string    `json:"hash"`   // of the candidate as queued: an edit resets the count
	Failed int       `json:"failed"` // failed runs
	Last   time.Time `json:"last"`
	Reason string    `json:"reason"`
}

type attemptsFile struct {
	Version    int                   `json:"version"`
	Candidates map[string]attemptRec `json:"candidates"`
}

// candHash identifies a candidate's content: its canonical JSON.
func candHash(c *mdmem.Candidate) string {
	b, _ := json.Marshal(c)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8])
}

// readAttempts returns the failed runs per queued candidate whose content
// is unchanged since they were counted. An unreadable file counts nothing
// (it is rewritten at the end of the run).
func readAttempts(dir string, cands []*mdmem.Candidate, logf func(string, ...any)) (map[string]int, map[string]attemptRec) {
	recs := map[string]attemptRec{}
	b, err := mdmem.ReadCacheFile(dir, attemptsName)
	if err != nil || b == nil {
		if err != nil {
			logf("%s: %v; attempts start again", AttemptsPath, err)
		}
		return map[string]int{}, recs
	}
	var f attemptsFile
	if err := json.Unmarshal(b, &f); err != nil {
		logf("%s is unreadable (%v); attempts start again", AttemptsPath, err)
		return map[string]int{}, recs
	}
	out := map[string]int{}
	for _, c := range cands {
		if r, ok := f.Candidates[c.ID]; ok && r.Hash == candHash(c) && r.Failed > 0 {
			out[c.ID] = r.Failed
			recs[c.ID] = r
		}
	}
	return out, recs
}

// writeAttempts records this run's held candidates (the archive-limit
// and pending-full holds keep their earlier count) and forgets every other one. The file is
// replaced atomically; it is removed when nothing is held.
func writeAttempts(ctx context.Context, dir string, plan *Plan, cands []*mdmem.Candidate, prev map[string]attemptRec, now time.Time) error {
	byID := map[string]*mdmem.Candidate{}
	for _, c := range cands {
		byID[c.ID] = c
	}
	f := attemptsFile{Version: 1, Candidates: map[string]attemptRec{}}
	for _, h := range plan.Held {
		c := byID[h.Candidate]
		if c == nil {
			continue
		}
		if h.Kind == HoldLimit || h.Kind == HoldPendingFull {
			if r, ok := prev[h.Candidate]; ok {
				f.Candidates[h.Candidate] = r
			}
			continue
		}
		f.Candidates[h.Candidate] = attemptRec{Hash: candHash(c), Failed: h.Attempts, Last: now.UTC(), Reason: mdmem.OneLine(h.Reason)}
	}
	if len(f.Candidates) == 0 {
		return mdmem.WriteCacheFile(ctx, dir, attemptsName, nil)
	}
	b, err := json.MarshalIndent(f, "", " ")
	if err != nil {
		return err
	}
	return mdmem.WriteCacheFile(ctx, dir, attemptsName, append(b, '\n'))
}

// quarantine moves candidates out of the queue into HeldDir
// (mdmem.HoldQueueFile), with the reason, failed runs and kind.
func quarantine(ctx context.Context, dir string, hs []Hold) error {
	for _, h := range hs {
		reason := fmt.Sprintf("%s\nfailed runs: %d\nkind: %s\n", mdmem.OneLine(h.Reason), h.Attempts, h.Kind)
		if err := mdmem.HoldQueueFile(ctx, dir, h.Candidate, reason); err != nil {
			return err
		}
	}
	return nil
}

// HeldFiles lists the candidates waiting in HeldDir for a person, with
// the reason recorded when they were moved there.
func HeldFiles(dir string) ([]Hold, error) {
	hd := filepath.Join(dir, filepath.FromSlash(HeldDir))
	ents, err := os.ReadDir(hd)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Hold
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || strings.HasPrefix(id, ".") || e.IsDir() {
			continue // a held symbolic link is listed too: it was moved here for a person
		}
		h := Hold{Candidate: id, Reason: "no reason recorded"}
		if b, err := os.ReadFile(filepath.Join(hd, id+".reason")); err == nil {
			lines := strings.Split(string(b), "\n")
			h.Reason = lines[0]
			for _, l := range lines[1:] {
				if v, ok := strings.CutPrefix(l, "failed runs: "); ok {
					fmt.Sscan(v, &h.Attempts)
				} else if v, ok := strings.CutPrefix(l, "kind: "); ok {
					h.Kind = v
				}
			}
		}
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Candidate < out[j].Candidate })
	return out, nil
}
