package printer

import (
	"fmt"

	"github.com/scale-preview/scale-preview/pkg/prediction"
)

// jobLine sums up what the Job controller counts: the mode, completions,
// succeeded, and the active pods against those it wants after the change.
func jobLine(j *prediction.JobInfo) string {
	s := j.CompletionMode
	if c := j.Completions; c != nil {
		if c.From != c.To {
			s += fmt.Sprintf(", completions %d -> %d", c.From, c.To)
		} else {
			s += fmt.Sprintf(", completions %d", c.From)
		}
	}
	s += fmt.Sprintf(", %d succeeded; active %d, wanted %d", j.Succeeded, j.Active, j.WantActive)
	if j.Forced > 0 {
		s += fmt.Sprintf("; %d go by index alone", j.Forced)
	}
	return s
}
