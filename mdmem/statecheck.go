package mdmem

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
)

// MaxIDNumber is the largest number an entry id can carry (nine digits).
const MaxIDNumber = 999_999_999

// stateHint says how to repair state.json by hand.
const stateHint = "set each number to the highest id number in use for that prefix (see `memctl list`), then commit the file"

// stateError explains a state.json that is not the JSON memctl writes.
func stateError(err error) error {
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		return fmt.Errorf("%s: %s holds %s, not an id number from 0 to %d; %s", StatePath, typ.Field, typ.Value, MaxIDNumber, stateHint)
	}
	return fmt.Errorf("%s is not valid JSON (%w); %s", StatePath, err, stateHint)
}

// check refuses high-water marks no id can have: negative, or beyond
// MaxIDNumber (where the next id would overflow).
func (st *State) check() error {
	prefixes := make([]string, 0, len(st.LastID))
	for p := range st.LastID {
		prefixes = append(prefixes, p)
	}
	sort.Strings(prefixes)
	for _, p := range prefixes {
		if n := st.LastID[p]; n < 0 || n > MaxIDNumber {
			return fmt.Errorf("%s: last_id.%s is %d, not an id number from 0 to %d; %s", StatePath, p, n, MaxIDNumber, stateHint)
		}
	}
	return nil
}
