package main

import (
	"fmt"
	"testing"
)

// TestSimulationScenarios replays, step by step, sequences the soak found
// to break the write path, with the simulation's checks after each step:
// a random run reaches them only now and then, these reach them every
// time. Each scenario runs on a few seeds (the content, files and ids
// picked differ).
func TestSimulationScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation skipped in -short mode")
	}
	bin := simBinary(t)
	// setup fills the memory so imports and hand edits land in several
	// files.
	setup := []func(s *sim) string{
		func(s *sim) string { return s.addBatch(6) },
		func(s *sim) string { return s.consolidate(nil, false) },
		func(s *sim) string { return s.importBatch(nil, 4) },
	}
	crashedImport := func(fp string) func(s *sim) string {
		return func(s *sim) string {
			s.stepBad = true
			return "MEMCTL_FAILPOINT=" + fp + ": " + s.importBatch([]string{"MEMCTL_FAILPOINT=" + fp}, 12)
		}
	}
	scenarios := []struct {
		name  string
		steps []func(s *sim) string
	}{
		// Soak seeds 30056, 30058 and 40078: an import dies with some of
		// its files written; a person edits files (on top of memctl's
		// bytes, or of the old content) and commits them, memctl's
		// half-written files among them. The next write must land the
		// import whole on top of the person's commit, not undo the part
		// the person did not commit.
		{"import killed, person edits and commits", []func(s *sim) string{
			crashedImport("txn-half-files"),
			(*sim).handAdd,
			(*sim).handChange,
			(*sim).personCommitStep,
			func(s *sim) string { return s.consolidate(nil, false) },
		}},
		{"import killed after its files, person edits and commits", []func(s *sim) string{
			crashedImport("txn-files"),
			(*sim).handChange,
			(*sim).handAdd,
			(*sim).personCommitStep,
			func(s *sim) string { return s.consolidate(nil, false) },
		}},
		// Soak seed 50015: as above, but the person commits one file and
		// leaves an edit of another, made on top of memctl's bytes,
		// uncommitted: the import must land whole and the hand-edit
		// commit must not take memctl's half-written entries.
		{"import killed, person commits one file and edits another", []func(s *sim) string{
			crashedImport("txn-files"),
			(*sim).handChange,
			(*sim).personCommitStep,
			(*sim).handDelete,
			(*sim).handAdd,
			func(s *sim) string { return s.consolidate(nil, false) },
		}},
		// A review of the recovery code (2026-12-03): a person's small
		// edit (a typo fixed or made) of an entry a killed write changed,
		// and `git commit -a`, which takes memctl's ledger and state
		// along, must not lose memctl's update, commit memctl's entries
		// as the person's, or leave the ledger saying candidates were
		// consumed by a write that was undone.
		{"import killed, person retypes an entry and commits everything", []func(s *sim) string{
			crashedImport("txn-half-files"),
			(*sim).handTypo,
			(*sim).handTypo,
			(*sim).personCommitAll,
			func(s *sim) string { return s.consolidate(nil, false) },
		}},
		{"consolidate killed after its files, person edits and commits everything", []func(s *sim) string{
			func(s *sim) string { return s.addBatch(6) },
			func(s *sim) string {
				s.stepBad = true
				return "MEMCTL_FAILPOINT=txn-files: " + s.consolidate([]string{"MEMCTL_FAILPOINT=txn-files"}, false)
			},
			(*sim).handTypo,
			(*sim).handChange,
			(*sim).personCommitAll,
			func(s *sim) string { return s.consolidate(nil, false) },
		}},
		{"import killed, person retypes one file and edits another", []func(s *sim) string{
			crashedImport("txn-files"),
			(*sim).handTypo,
			(*sim).handAdd,
			(*sim).handChange,
			func(s *sim) string { return s.consolidate(nil, false) },
		}},
		// Soak seed 270017: the person deletes or retypes some of a killed
		// import's entries and commits those files; the import must then
		// land whole, or be taken out whole (the retyped entries are the
		// person's), never stay half committed.
		{"import killed, person deletes and retypes its entries and commits", []func(s *sim) string{
			crashedImport("txn-files"),
			(*sim).handDelete,
			(*sim).handTypo,
			(*sim).personCommitStep,
			(*sim).handAdd,
			(*sim).handTypo,
			func(s *sim) string { return s.consolidate(nil, false) },
		}},
		// Stop 19's residuals (2026-12-03): a model's merge of a text given again
		// in another category folded it into the entry of the first
		// category, with the candidate's text: the candidate's category
		// was gone.
		{"model merges a text given in another category", []func(s *sim) string{
			(*sim).addRefiled,
			func(s *sim) string {
				s.modes = []string{"merge-unrelated"}
				return s.consolidate(nil, true)
			},
		}},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			for seed := uint64(1); seed <= 4; seed++ {
				t.Run(fmt.Sprint(seed), func(t *testing.T) {
					s := newSim(t, bin, seed, simBriefKinds, []string{"add"}, map[string]bool{})
					steps := append(append([]func(*sim) string{}, setup...), sc.steps...)
					for i, step := range steps {
						s.step = i + 1
						s.stepOK, s.stepBad, s.stepConsolidated = false, false, false
						desc := step(s)
						s.hist = append(s.hist, fmt.Sprintf("%4d %s", s.step, desc))
						s.check(true)
						if t.Failed() {
							return
						}
					}
				})
			}
		})
	}
}
