package prediction

// JobInfo is what a Job scale-in adds (kubectl scale-preview job/NAME
// --parallelism=N [--completions=N]).
type JobInfo struct {
	CompletionMode string `json:"completionMode"` // NonIndexed | Indexed
	Parallelism    Change `json:"parallelism"`
	// Completions is set when the Job has completions; From == To unless
	// --completions changes them (elastic Indexed Jobs).
	Completions *Change `json:"completions,omitempty"`
	Suspended   bool    `json:"suspended,omitempty"`
	Succeeded   int32   `json:"succeeded"`
	// Active pods now, and the controller's wantActive after the change.
	Active     int   `json:"active"`
	WantActive int32 `json:"wantActive"`
	// Forced counts pods removed before any comparison: without an index,
	// duplicates of an index, or an index >= completions.
	Forced int `json:"forced"`
	// Syncs the deletions take (500 per sync from 1.22).
	Syncs int `json:"syncs"`
	// NoChange: nothing to scale in (not lower, suspended, finished); the
	// message says why.
	NoChange bool `json:"noChange,omitempty"`
}

// Change is a spec field before and after.
type Change struct {
	From int32 `json:"from"`
	To   int32 `json:"to"`
}
