package mdmem

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/memctl/memctl/mdmem/gitstore"
	"github.com/memctl/memctl/mdmem/redact"
)

// Sync: one memory on several machines through a git remote (docs/SYNC.md).
// Store.Sync fetches the remote branch with the git command, then, holding
// the memory's lock, takes the remote's commits the way every write lands
// (gitstore.Prepare/Land under the one journal): a fast-forward when the
// local branch is behind, a two-parent merge commit of MergeReplicas's
// files when both moved. It checks every commit it is about to publish
// (no queue, cache, trace or key file; no secret on an added line), pushes
// by hash without force, and tries again from the fetch when the remote
// moved meanwhile. It never rewrites history and never resets to the
// remote: a remote whose history no longer holds what this copy last
// synced is refused, with the old tip kept under a rescue ref.

// SyncedRefPrefix holds, per remote, the remote commit this copy last
// merged or pushed (local only, never pushed).
const SyncedRefPrefix = "refs/memctl/synced/"

// RescueRefPrefix holds commits a refused sync keeps for the person.
const RescueRefPrefix = "refs/memctl/rescue/"

// TrailerMachine names the machine that made a sync merge commit.
const TrailerMachine = "Memctl-Machine"

// ErrRemote is returned (wrapped) when the remote cannot be reached,
// refuses the credentials, or keeps moving: nothing local changed.
var ErrRemote = gitstore.ErrRemote

// ErrRemoteBusy is returned (wrapped, with ErrRemote) when every push of
// a sync was refused because the remote moved or another push held its
// branch at that moment: the remote is reachable, nothing local changed.
var ErrRemoteBusy = errors.New("the remote kept moving or was busy")

// SyncOptions says how to sync.
type SyncOptions struct {
	Remote string // "" = the branch's upstream remote, else origin
	NoPush bool   // fetch and merge only
	// AdoptRemote merges with a remote branch that shares no history with
	// this memory (two separate `memctl init`s), from an empty base.
	AdoptRemote bool
	Machine     string // this machine's name in the merge commit ("" = host name)
	// PublishPurge replaces the remote branch with this memory's rewritten
	// history after a forget --purge-history (a force-push, leased on the
	// remote commit this copy last synced: refused if anyone pushed since).
	PublishPurge bool
	Attempts     int // fetch-merge-push rounds when the remote keeps moving (0 = 5)
}

// SyncResult says what a sync did.
type SyncResult struct {
	Remote     string       `json:"remote"`
	Branch     string       `json:"branch"`
	Action     string       `json:"action"` // up-to-date, pushed, fast-forward, merged (then pushed unless --no-push)
	Head       string       `json:"head"`
	RemoteHead string       `json:"remote_head,omitempty"` // the remote branch after the sync
	Pushed     bool         `json:"pushed"`
	Attempts   int          `json:"attempts"`
	Merge      *MergeResult `json:"merge,omitempty"`
	Resolved   string       `json:"resolved,omitempty"` // the commit that finished a person's unfinished git merge first
}

// SyncRefusedError is a sync memctl refuses to make, nothing changed: a
// rewritten or unrelated remote, a file it cannot merge, a secret or a
// local-only file in the commits it would publish.
type SyncRefusedError struct {
	Reason string
	Fix    string
}

func (e *SyncRefusedError) Error() string { return e.Reason }

// Hint says how to go on.
func (e *SyncRefusedError) Hint() string { return e.Fix }

// Sync brings the memory and the remote branch to the same commit.
func (s *Store) Sync(ctx context.Context, opts SyncOptions) (res *SyncResult, err error) {
	if p := s.Repo.Prefix(); p != "" {
		return nil, &SyncRefusedError{Reason: fmt.Sprintf("the memory is the folder %s inside the repository %s; memctl syncs a memory that is a repository of its own", p, s.Repo.Root()),
			Fix: "move the memory into a repository of its own (memctl init <dir>, memctl import), or sync the enclosing repository with git"}
	}
	resolved, resolvedMerge := "", (*MergeResult)(nil)
	if _, err := os.Stat(filepath.Join(s.Repo.GitDir(), "MERGE_HEAD")); err == nil {
		// A person's own git pull stopped on conflicts: finish it first,
		// with the same rules.
		rr, err := s.Resolve(ctx, opts.Machine)
		if err != nil {
			return nil, err
		}
		resolved, resolvedMerge = rr.Commit, rr.Merge
	}
	// What the finished merge decided is part of what this sync reports
	// (its conflicts make exit 7).
	defer func() {
		if resolvedMerge == nil || res == nil {
			return
		}
		if res.Merge == nil {
			res.Merge = resolvedMerge
			return
		}
		res.Merge.Conflicts = append(resolvedMerge.Conflicts, res.Merge.Conflicts...)
		res.Merge.Renamed = append(resolvedMerge.Renamed, res.Merge.Renamed...)
	}()
	branch, err := s.Repo.Branch()
	if err != nil {
		return nil, err
	}
	res = &SyncResult{Remote: opts.Remote, Branch: branch, Resolved: resolved}
	if res.Remote == "" {
		if r, b, ok := s.Repo.Upstream(ctx); ok {
			res.Remote, res.Branch = r, b
		} else {
			res.Remote = "origin"
		}
	}
	if _, err := s.Repo.RemoteURL(ctx, res.Remote); err != nil {
		return nil, &SyncRefusedError{Reason: err.Error(), Fix: "add the remote with `git remote add " + res.Remote + " <url>` (a URL without a password; credentials belong in a credential helper or ssh-agent)"}
	}
	if lease, ok := s.purgeLeases()[res.Remote]; ok {
		// A history purge set this remote aside: nothing is fetched from
		// it (its commits would bring the purged text back) until the
		// purge is published.
		return s.publishPurge(ctx, res, lease, opts)
	}
	attempts := opts.Attempts
	if attempts <= 0 {
		attempts = 5
	}
	for res.Attempts = 1; ; res.Attempts++ {
		// What this copy last saw of the remote: the commit it last synced,
		// else (a plain clone, or git fetch) the remote-tracking branch.
		seen, _ := s.Repo.ReadRefHash(SyncedRefPrefix + res.Remote)
		if seen == "" {
			seen, _ = s.Repo.ReadRefHash("refs/remotes/" + res.Remote + "/" + res.Branch)
		}
		tip, err := s.Repo.Fetch(ctx, res.Remote, res.Branch)
		if err != nil {
			return nil, err
		}
		head, err := s.syncLocked(ctx, res, tip, seen, opts)
		if err != nil {
			return nil, err
		}
		res.Head = head
		if head == tip || opts.NoPush {
			res.RemoteHead = tip
			if tip != "" {
				_ = s.Repo.SetRef(ctx, SyncedRefPrefix+res.Remote, tip, "memctl sync")
			}
			if res.Action == "" {
				res.Action = "up-to-date"
			}
			return res, nil
		}
		if err := s.checkOutgoing(ctx, tip, head); err != nil {
			return nil, err
		}
		err = s.Repo.Push(ctx, res.Remote, head, res.Branch)
		if errors.Is(err, gitstore.ErrPushRejected) && res.Attempts < attempts {
			d := time.Duration(100*res.Attempts)*time.Millisecond + rand.N(200*time.Millisecond)
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(d):
			}
			continue
		}
		if errors.Is(err, gitstore.ErrPushRejected) {
			return nil, fmt.Errorf("%w: %d pushes were refused (the last: %v); your commits are kept here and the next sync goes on: %w", ErrRemoteBusy, attempts, err, gitstore.ErrRemote)
		}
		if err != nil {
			return nil, err
		}
		res.Pushed, res.RemoteHead = true, head
		if res.Action == "" {
			res.Action = "pushed"
		}
		_ = s.Repo.SetRef(ctx, SyncedRefPrefix+res.Remote, head, "memctl sync: pushed")
		return res, nil
	}
}

// syncLocked takes the fetched remote commit (tip; "" = none) into the
// local branch under the lock, and returns the branch's commit. seen is
// the remote commit this copy saw before the fetch: a tip whose history
// does not hold it was rewritten.
func (s *Store) syncLocked(ctx context.Context, res *SyncResult, tip, seen string, opts SyncOptions) (string, error) {
	unlock, err := s.Lock(ctx)
	if err != nil {
		return "", err
	}
	defer func() { _ = unlock() }()
	// The person's uncommitted edits are committed first, as their own
	// commit, so the merge holds them. (What follows a hand edit, such as
	// renumbering a repeated id, is left to the next writer: it reads the
	// whole memory, and sync need not.)
	paths, _, err := s.handEditPaths(ctx)
	if err != nil {
		return "", err
	}
	if changed, err := s.Repo.Changed(ctx, paths, nil); err != nil {
		return "", err
	} else if len(changed) > 0 {
		if _, err := s.CommitHandEdits(ctx); err != nil {
			return "", err
		}
	}
	if err := s.enableRandomIDs(ctx); err != nil {
		return "", err
	}
	local, err := s.Repo.HeadHash(ctx)
	if err != nil {
		return "", err
	}
	if tip == "" || tip == local {
		return local, nil
	}
	if synced := seen; synced != "" && synced != tip {
		if ok, err := s.Repo.Contains(ctx, tip, synced); err != nil {
			return "", err
		} else if !ok {
			if took, err := s.takeDeclaredPurge(ctx, res, local, tip, synced); err != nil || took {
				return tip, err
			}
			rescue := RescueRefPrefix + res.Remote + "/" + time.Now().UTC().Format("20060102T150405Z")
			_ = s.Repo.SetRef(ctx, rescue, synced, "memctl sync: the remote was rewritten")
			return "", &SyncRefusedError{
				Reason: fmt.Sprintf("the history of %s/%s was rewritten: it no longer holds %.12s, which this memory last synced (now %.12s); memctl never merges with or resets to a rewritten remote", res.Remote, res.Branch, synced, tip),
				Fix: fmt.Sprintf("the old remote commit is kept as %s. If another machine published a history purge (memctl sync --publish-purge), re-clone this memory (commits not yet pushed from here: git log %s..HEAD). Otherwise find out who rewrote %s/%s before anything else",
					rescue, tip, res.Remote, res.Branch),
			}
		}
	}
	if local == "" {
		return s.fastForward(ctx, res, "", tip)
	}
	base, err := s.Repo.MergeBase(ctx, local, tip)
	if err != nil {
		return "", err
	}
	switch base {
	case tip:
		return local, nil // the remote is behind: push only
	case local:
		return s.fastForward(ctx, res, local, tip)
	}
	if base == "" && !opts.AdoptRemote {
		return "", &SyncRefusedError{
			Reason: fmt.Sprintf("%s/%s shares no history with this memory (two separate memctl init?)", res.Remote, res.Branch),
			Fix:    "to merge them entry by entry from an empty base, run `memctl sync --adopt-remote` (ids both sides used for different texts are renamed and reported)",
		}
	}
	return s.mergeRemote(ctx, res, base, local, tip, opts)
}

// publishPurge publishes a history purge: the remote branch, still at
// the commit the purge set aside (lease), is replaced by this memory's
// rewritten history with a push leased on it. Without --publish-purge,
// or when the remote moved since, it refuses.
func (s *Store) publishPurge(ctx context.Context, res *SyncResult, lease string, opts SyncOptions) (*SyncResult, error) {
	if !opts.PublishPurge {
		return nil, &SyncRefusedError{
			Reason: fmt.Sprintf("a history purge (forget --purge-history) rewrote this memory's history; %s still holds the old commits, and syncing as usual would bring the purged text back", res.Remote),
			Fix:    "to replace the remote's history with this one, run `memctl sync --publish-purge` (a clone with nothing of its own since takes it on its next sync; others must be re-cloned; docs/SYNC.md \"Purging history\")",
		}
	}
	unlock, err := s.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = unlock() }()
	tip, err := s.Repo.RemoteHead(ctx, res.Remote, res.Branch)
	if err != nil {
		return nil, err
	}
	if tip != lease {
		return nil, &SyncRefusedError{
			Reason: fmt.Sprintf("%s/%s moved since the purge set it aside (%.12s, now %.12s): publishing the purge would drop those commits", res.Remote, res.Branch, lease, tip),
			Fix:    "re-clone the memory elsewhere, take the other machine's entries there, and purge again from that clone",
		}
	}
	// Declare the rewrite in the new history itself, so the other
	// machines can tell it from any other force-push.
	local, err := s.declarePurge(ctx, lease)
	if err != nil {
		return nil, err
	}
	if err := s.checkOutgoing(ctx, "", local); err != nil {
		return nil, err
	}
	if err := s.Repo.PushLeased(ctx, res.Remote, local, res.Branch, lease); err != nil {
		return nil, err
	}
	_ = s.Repo.SetRef(ctx, SyncedRefPrefix+res.Remote, local, "memctl sync: published a history purge")
	leases := s.purgeLeases()
	delete(leases, res.Remote)
	if err := s.writePurgeLeases(ctx, leases); err != nil {
		return nil, err
	}
	res.Action, res.Pushed, res.Head, res.RemoteHead, res.Attempts = "published-purge", true, local, local, 1
	return res, nil
}

// fastForward moves the branch to the remote's commit, which holds it, and
// brings the files there: the same journal and landing as any write.
func (s *Store) fastForward(ctx context.Context, res *SyncResult, local, tip string) (string, error) {
	prep, err := s.Repo.PrepareFastForward(ctx, local, tip)
	if err != nil {
		return "", err
	}
	var dirty []string
	for _, c := range prep.Changes {
		w, err := s.Repo.WorktreeBlob(ctx, c.Path)
		if err != nil {
			return "", err
		}
		if w != c.Old {
			dirty = append(dirty, c.Path)
		}
	}
	if len(dirty) > 0 {
		return "", &SyncRefusedError{Reason: "uncommitted changes to " + strings.Join(dirty, ", ") + ", which the remote's commits change too",
			Fix: "commit or remove those changes (git status), then sync again"}
	}
	j := &txnJournal{Op: "sync: " + prep.Subject, Ref: prep.Ref, Parent: prep.Parent, Commit: prep.Commit, Files: prep.Changes}
	if err := s.landJournal(context.WithoutCancel(ctx), j, prep); err != nil {
		return "", err
	}
	res.Action = "fast-forward"
	return tip, nil
}

// machineOf names a side of a merge for a conflict's note: the machine
// its commit names, else the commit.
func (s *Store) machineOf(ctx context.Context, commit string) string {
	if c, err := s.Repo.ReadCommit(ctx, commit); err == nil {
		if m := c.Trailers[TrailerMachine]; len(m) > 0 && strings.TrimSpace(m[0]) != "" {
			return strings.TrimSpace(m[0]) + " (" + commit[:min(12, len(commit))] + ")"
		}
	}
	return "commit " + commit[:min(12, len(commit))]
}

// mergeRemote makes the two-parent merge commit of the local branch and
// the remote's commit.
func (s *Store) mergeRemote(ctx context.Context, res *SyncResult, base, local, tip string, opts SyncOptions) (string, error) {
	bf, lf, tf, err := s.mergeSides(ctx, base, local, tip)
	if err != nil {
		return "", err
	}
	mr, err := MergeReplicas(MergeInput{Base: bf, Forgotten: s.repeatsForgotten, Sides: [2]MergeSide{
		{Files: lf, Machine: s.machineOf(ctx, local)},
		{Files: tf, Machine: s.machineOf(ctx, tip)},
	}})
	var other *OtherFileConflictError
	if errors.As(err, &other) {
		return "", &SyncRefusedError{Reason: fmt.Sprintf("%s and this memory changed %s differently; memctl merges memory files entry by entry, not these", res.Remote, strings.Join(other.Paths, ", ")),
			Fix: "make the file the same on both machines (edit, commit, and sync from the other machine first), then sync again"}
	}
	if err != nil {
		return "", fmt.Errorf("merge with %s: %w", res.Remote, err)
	}
	head, err := s.commitMerge(ctx, lf, mr, base, tip, opts.Machine, CommitMessage{
		Subject: fmt.Sprintf("sync: merge %s/%s (%.12s)", res.Remote, res.Branch, tip), Op: "sync"})
	if err != nil {
		return "", err
	}
	res.Action, res.Merge = "merged", mr
	return head, nil
}

// mergeSides reads what a replica merge of ours and theirs with their
// base needs: only the files whose blob differs between the three commits
// ("" = none), and MEMORY.md always (a conflicting edit in a topic file
// waits in its Pending section); the others stay as they are.
func (s *Store) mergeSides(ctx context.Context, base, ours, theirs string) (b, o, t map[string][]byte, err error) {
	var hashes [3]map[string]string
	for i, c := range []string{base, ours, theirs} {
		if hashes[i], err = s.Repo.TreeHashes(ctx, c); err != nil {
			return nil, nil, nil, err
		}
	}
	differ := map[string]bool{MainFile: true}
	for _, hs := range hashes {
		for p := range hs {
			if hashes[0][p] != hashes[1][p] || hashes[1][p] != hashes[2][p] {
				differ[p] = true
			}
		}
	}
	var files [3]map[string][]byte
	for i, hs := range hashes {
		files[i] = map[string][]byte{}
		for p := range differ {
			if h, ok := hs[p]; ok {
				if files[i][p], err = s.Repo.ReadBlob(ctx, h); err != nil {
					return nil, nil, nil, err
				}
			}
		}
	}
	return files[0], files[1], files[2], nil
}

// commitMerge commits the replica merge mr of the branch's files ours
// (the version it was computed from) as a merge of theirs: msg's subject
// and op, the merge's report as its body, and the trailers that name the
// machine, the base, the conflicts and the renamed ids.
func (s *Store) commitMerge(ctx context.Context, ours map[string][]byte, mr *MergeResult, base, theirs, machine string, msg CommitMessage) (string, error) {
	t, err := s.Begin(ctx)
	if err != nil {
		return "", err
	}
	defer t.Abort()
	paths := map[string]bool{}
	for p := range ours {
		paths[p] = true
	}
	for p := range mr.Files {
		paths[p] = true
	}
	for _, p := range sortedKeys(paths) {
		old, had := ours[p]
		nw, has := mr.Files[p]
		if had == has && bytes.Equal(old, nw) {
			continue
		}
		if !had {
			old = nil
		}
		if !has {
			nw = nil
		}
		if err := t.Put(ctx, p, old, nw); err != nil {
			return "", err
		}
	}
	if machine == "" {
		machine, _ = os.Hostname()
	}
	msg.Body = syncBody(mr)
	msg.Extra = append(msg.Extra, [2]string{TrailerMachine, OneLine(machine)}, [2]string{"Memctl-Merge-Base", orNoneStr(base)})
	if n := len(mr.Conflicts); n > 0 {
		msg.Extra = append(msg.Extra, [2]string{"Memctl-Conflicts", fmt.Sprint(n)})
	}
	for _, c := range mr.Conflicts {
		msg.Entries = append(msg.Entries, c.ID, c.Pending)
	}
	for _, r := range mr.Renamed {
		msg.Entries = append(msg.Entries, r.From, r.To)
		msg.Extra = append(msg.Extra, [2]string{"Memctl-Renamed", r.From + " -> " + r.To})
	}
	t.SetMergeParent(theirs)
	return t.Commit(ctx, msg)
}

func orNoneStr(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// syncBody says in the merge commit what the merge decided.
func syncBody(mr *MergeResult) string {
	var b strings.Builder
	for _, c := range mr.Conflicts {
		fmt.Fprintf(&b, "%s was edited differently on both sides: the newer edit stays, the other waits in Pending as %s (from %s).\n", c.ID, c.Pending, c.Machine)
	}
	for _, r := range mr.Renamed {
		fmt.Fprintf(&b, "%s named two different entries: the second is now %s.\n", r.From, r.To)
	}
	if len(mr.Kept) > 0 {
		fmt.Fprintf(&b, "Kept (edited on one side, deleted by hand on the other): %s.\n", strings.Join(mr.Kept, ", "))
	}
	if len(mr.Forgotten) > 0 {
		fmt.Fprintf(&b, "Forgotten on one side, removed: %s.\n", strings.Join(mr.Forgotten, ", "))
	}
	if len(mr.Dropped) > 0 {
		fmt.Fprintf(&b, "Added on one side with a text the other side forgot, not kept: %s.\n", strings.Join(mr.Dropped, ", "))
	}
	for _, p := range mr.Prose {
		fmt.Fprintf(&b, "Both sides rewrote the lines at %s differently: the earlier text stays (both versions are in the parents).\n", p)
	}
	return b.String()
}

// localOnlyPath reports whether a committed path must never leave the
// machine: the queue, the caches, the traces, a key.
func localOnlyPath(p string) bool {
	for _, d := range []string{QueueDir + "/", ".memctl/cache/", ".memctl/traces/"} {
		if strings.HasPrefix(p, d) || p == strings.TrimSuffix(d, "/") {
			return true
		}
	}
	base := p[strings.LastIndexByte(p, '/')+1:]
	return base == TombstoneKeyName || strings.HasSuffix(base, ".key")
}

// checkOutgoing checks every commit sync is about to publish (in head's
// history and not in the remote's tip): no local-only file, and no added
// line holding a secret.
func (s *Store) checkOutgoing(ctx context.Context, tip, head string) error {
	commits, err := s.Repo.CommitsBetween(ctx, tip, head, 100000)
	if err != nil {
		return err
	}
	for _, c := range commits {
		info, err := s.Repo.ReadCommit(ctx, c)
		if err != nil {
			return err
		}
		parent := ""
		if len(info.Parents) > 0 {
			parent = info.Parents[0]
		}
		changes, err := s.Repo.ChangedPaths(ctx, parent, c)
		if err != nil {
			return err
		}
		for _, ch := range changes {
			if ch.New == "" {
				continue
			}
			if localOnlyPath(ch.Path) {
				return &SyncRefusedError{Reason: fmt.Sprintf("commit %.12s holds %s, which never leaves this machine; nothing was pushed", c, ch.Path),
					Fix: "remove it from the history before the first push (git rebase -i, or memctl forget --purge-history for memory entries), then sync again"}
			}
			nw, err := s.Repo.ReadBlob(ctx, ch.New)
			if err != nil {
				return err
			}
			var old []byte
			if ch.Old != "" {
				if old, err = s.Repo.ReadBlob(ctx, ch.Old); err != nil {
					return err
				}
			}
			had := map[string]bool{}
			for _, l := range strings.Split(string(old), "\n") {
				had[l] = true
			}
			for i, l := range strings.Split(string(nw), "\n") {
				if had[l] {
					continue
				}
				if f := redact.Scan(l); len(f) > 0 {
					return &SyncRefusedError{Reason: fmt.Sprintf("commit %.12s adds a secret (%s) at %s:%d; nothing was pushed: history cannot be unpushed", c, f[0].Kind, ch.Path, i+1),
						Fix: "remove the entry with `memctl forget <id> --purge-history` (it rewrites local history, before anything is published), then sync again"}
				}
			}
		}
	}
	return nil
}

// purgeLeasePath records, per remote, the remote commit a history purge
// set aside (leaveSyncedRemotes): sync --publish-purge replaces exactly
// that commit.
const purgeLeasePath = CacheDir + "/sync-purge.json"

func (s *Store) purgeLeases() map[string]string {
	out := map[string]string{}
	if b, err := os.ReadFile(s.abs(purgeLeasePath)); err == nil {
		_ = json.Unmarshal(b, &out)
	}
	return out
}

func (s *Store) writePurgeLeases(ctx context.Context, leases map[string]string) error {
	if len(leases) == 0 {
		if err := os.Remove(s.abs(purgeLeasePath)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	if err := EnsureDir(s.Dir, CacheDir); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(leases, "", "  ")
	return WriteFileAtomic(ctx, s.abs(purgeLeasePath), append(b, '\n'), PrivateFileMode)
}

// leaveSyncedRemotes sets aside what this copy holds of the remotes it
// syncs with before a history purge: their synced and remote-tracking
// refs are deleted, and the commit each remote was at is kept as a lease.
func (s *Store) leaveSyncedRemotes(ctx context.Context) error {
	synced, err := s.Repo.RefsUnder(ctx, SyncedRefPrefix)
	if err != nil || len(synced) == 0 {
		return err
	}
	leases := s.purgeLeases()
	for ref, h := range synced {
		remote := strings.TrimPrefix(ref, SyncedRefPrefix)
		if _, ok := leases[remote]; !ok {
			leases[remote] = h
		}
	}
	if err := s.writePurgeLeases(ctx, leases); err != nil {
		return err
	}
	for remote := range leases {
		tracking, err := s.Repo.RefsUnder(ctx, "refs/remotes/"+remote+"/")
		if err != nil {
			return err
		}
		for ref := range tracking {
			if err := s.Repo.DeleteRef(ctx, ref); err != nil {
				return err
			}
		}
		if _, ok := synced[SyncedRefPrefix+remote]; ok {
			if err := s.Repo.DeleteRef(ctx, SyncedRefPrefix+remote); err != nil {
				return err
			}
		}
	}
	return nil
}

// repeatsForgotten reports whether text repeats one of the given
// tombstone lines, checked with this copy's keys (or their public hashes).
func (s *Store) repeatsForgotten(lines []byte, text string) bool {
	t, err := s.tombstonesFrom(lines)
	if err != nil {
		return false // a tombstone the check cannot read: the merge keeps the entry, and every later add checks it again
	}
	_, hit := t.Match(text)
	return hit
}

// enableRandomIDs switches a memory that syncs to random ids (git.ids =
// "random") unless the config already says how ids are made: counters
// minted offline on two machines collide (the merge renames one, but the
// id then named two texts for a while). The change is a commit of its
// own; every machine makes the same edit of the same file, so it merges.
func (s *Store) enableRandomIDs(ctx context.Context) error {
	if s.Config.Git.IDs != "" {
		return nil
	}
	old, err := readFileIfExists(s.abs(ConfigPath))
	if err != nil {
		return err
	}
	text := string(old)
	const commented, set = `# ids = "counter"`, `ids = "random"`
	switch {
	case strings.Contains(text, "\n"+commented+"\n"):
		text = strings.Replace(text, "\n"+commented+"\n", "\n"+set+"\n", 1)
	case strings.HasPrefix(text, "[git]\n") || strings.Contains(text, "\n[git]\n"):
		i := strings.Index(text, "[git]\n") + len("[git]\n")
		text = text[:i] + set + "\n" + text[i:]
	default:
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		text += "\n[git]\n" + set + "\n"
	}
	t, err := s.Begin(ctx)
	if err != nil {
		return err
	}
	defer t.Abort()
	if err := t.Put(ctx, ConfigPath, old, []byte(text)); err != nil {
		return err
	}
	if _, err := t.Commit(ctx, CommitMessage{Subject: "sync: new entry ids are random from now on (git.ids)",
		Body: "Machines that write offline and sync never mint the same id. Ids already written stay as they are.", Op: "sync"}); err != nil {
		return err
	}
	s.Config.Git.IDs = IDsRandom
	return nil
}

// InstallMergeDriver registers memctl (the binary exe) as git's merge
// driver for the memory files of this clone (gitstore.InstallMergeDriver)
// and returns the attributes file it wrote.
func (s *Store) InstallMergeDriver(ctx context.Context, exe string) (string, error) {
	if s.Repo.Prefix() != "" {
		return "", &SyncRefusedError{Reason: "the memory is a folder inside a larger repository", Fix: "the merge driver is for a memory that is its own repository"}
	}
	return s.Repo.InstallMergeDriver(ctx, exe)
}

// TextMergeFile is git's line merge of one file (git merge-file), for
// what the merge driver cannot merge entry by entry.
var TextMergeFile = gitstore.TextMergeFile

// PurgesPath is the committed record of the history purges published to
// the remotes: one JSON line each, the remote commit the purged history
// replaced and the day; no content.
const PurgesPath = MarkerDir + "/purges.jsonl"

// purgeRecord is one line of PurgesPath.
type purgeRecord struct {
	Replaces string `json:"replaces"`
	Date     string `json:"date"`
}

// declarePurge commits the record of a purge about to be published.
func (s *Store) declarePurge(ctx context.Context, lease string) (string, error) {
	old, err := readFileIfExists(s.abs(PurgesPath))
	if err != nil {
		return "", err
	}
	line, _ := json.Marshal(purgeRecord{Replaces: lease, Date: s.now().UTC().Format("2006-01-02")})
	data := append(append([]byte(nil), old...), append(line, '\n')...)
	t, err := s.Begin(ctx)
	if err != nil {
		return "", err
	}
	defer t.Abort()
	if err := t.Put(ctx, PurgesPath, old, data); err != nil {
		return "", err
	}
	if _, err := t.Commit(ctx, CommitMessage{Subject: fmt.Sprintf("sync: publish a history purge (replaces %.12s)", lease), Op: "sync"}); err != nil {
		return "", err
	}
	return s.Repo.HeadHash(ctx)
}

// takeDeclaredPurge takes a rewritten remote when its history declares a
// purge that replaced exactly the commit this copy last saw (seen), and
// this copy has nothing of its own since (its branch is in seen's
// history): the branch moves to the remote's commit through the write
// journal, and the old history, which holds the purged text, is removed
// from this copy (reflogs expired, unreachable objects deleted). took is
// false when the rewrite is not such a purge: the caller refuses.
func (s *Store) takeDeclaredPurge(ctx context.Context, res *SyncResult, local, tip, seen string) (took bool, err error) {
	h, err := s.Repo.BlobAt(ctx, tip, PurgesPath)
	if err != nil || h == "" {
		return false, err
	}
	data, err := s.Repo.ReadBlob(ctx, h)
	if err != nil {
		return false, err
	}
	declared := false
	for _, l := range bytes.Split(data, []byte("\n")) {
		var rec purgeRecord
		if json.Unmarshal(l, &rec) == nil && rec.Replaces == seen {
			declared = true
		}
	}
	if !declared {
		return false, nil
	}
	if local != seen {
		if behind, err := s.Repo.Contains(ctx, seen, local); err != nil || !behind {
			if err == nil {
				err = &SyncRefusedError{
					Reason: fmt.Sprintf("another machine published a history purge to %s/%s, and this memory has commits of its own since it last synced", res.Remote, res.Branch),
					Fix:    fmt.Sprintf("re-clone the memory and add what this copy had that the remote lacks (git log %.12s..HEAD lists it); memctl does not replay it onto the purged history", seen),
				}
			}
			return false, err
		}
	}
	prep, err := s.Repo.PrepareSwitch(ctx, local, tip)
	if err != nil {
		return false, err
	}
	j := &txnJournal{Op: "sync: take the purged history of " + res.Remote, Ref: prep.Ref, Parent: prep.Parent, Commit: prep.Commit, Files: prep.Changes}
	if err := s.landJournal(context.WithoutCancel(ctx), j, prep); err != nil {
		return false, err
	}
	// Nothing here may keep the old history: memctl's own refs of this
	// remote move or go, then the reflogs and the unreachable objects.
	if err := s.Repo.SetRef(ctx, SyncedRefPrefix+res.Remote, tip, "memctl sync: took a published history purge"); err != nil {
		return true, err
	}
	if rescues, err := s.Repo.RefsUnder(ctx, RescueRefPrefix+res.Remote+"/"); err == nil {
		for ref := range rescues {
			_ = s.Repo.DeleteRef(ctx, ref)
		}
	}
	if err := s.Repo.PurgeUnreachable(ctx); err != nil {
		return true, fmt.Errorf("took the purged history, but removing the old objects failed: %w", err)
	}
	res.Action = "took-purge"
	return true, nil
}
