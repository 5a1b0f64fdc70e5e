package cmd

import (
	"os"
	"runtime/debug"
)

// predictGCPercent is the collector's headroom while predicting. The
// snapshot is all read by then and stays live, and the prediction adds
// its own records for every pod; Go's default (100: the heap may grow to
// twice what is live) made that phase the peak of the whole run. At 30
// the peak at 20,000 pods (JSON) fell from about 215 to 175 MB of RSS for
// about 10% more CPU; at 40, 180 to 200 MB. Reading, where most garbage
// is made, keeps the default.
const predictGCPercent = 30

// tightenGC lowers the collector's headroom for the rest of the run,
// unless the user set GOGC, and returns what restores it (Main runs many
// times in one test binary).
func tightenGC() (restore func()) {
	if _, set := os.LookupEnv("GOGC"); set {
		return func() {}
	}
	old := debug.SetGCPercent(predictGCPercent)
	return func() { debug.SetGCPercent(old) }
}
