package mdmem

import (
	"context"
	"os"
	"strings"
	"time"
)

// CarryChecks carries the markers of the two checks that read the whole
// memory across a commit consolidate made: the hand-edit follow-up's
// (handEditCheckedPath: "the last complete check ran on this commit") and
// retention's (retentionCheckedPath: "nothing was due on this commit,
// this day"). Without it, the first run after every consolidate with
// candidates read and parsed every file twice, as if a person had
// committed.
//
// It is called with the lock held, after commit, made on base from the
// plan's new content of the written files (nil: deleted). A marker moves
// only when it names base, so only when the checks held there:
//   - the follow-up looks at what hand edits since memctl's last own
//     commit brought in, and at ids (forgotten ones live, one id twice).
//     After memctl's own commit there are no such edits, and consolidate
//     writes no forgotten id and no id twice (new ids come from the
//     allocator, which never hands one out again);
//   - retention's "nothing due" holds for the files the commit did not
//     change, and is checked here on the written files' entries.
//
// Both are caches: a marker left behind (a crash, an error here) costs
// the next run a full check, never a skipped one.
func (s *Store) CarryChecks(ctx context.Context, base, commit string, written map[string][]byte, now time.Time) {
	if base == "" || commit == "" || base == commit {
		return
	}
	if b, err := os.ReadFile(s.abs(handEditCheckedPath)); err == nil && strings.TrimSpace(string(b)) == base {
		_ = WriteFileAtomic(ctx, s.abs(handEditCheckedPath), []byte(commit+"\n"), PrivateFileMode)
	}
	b, err := os.ReadFile(s.abs(retentionCheckedPath))
	if err != nil || strings.TrimSpace(string(b)) != s.retentionMark(base, now) {
		return
	}
	scan := NewRetentionScan(now, 0, s.Config.Consolidate.ArchiveDays)
	for p, data := range written {
		if data != nil {
			scan.Add(ParseDoc(p, data))
		}
	}
	if len(scan.Due()) == 0 {
		_ = WriteFileAtomic(ctx, s.abs(retentionCheckedPath), []byte(s.retentionMark(commit, now)+"\n"), PrivateFileMode)
	}
}
