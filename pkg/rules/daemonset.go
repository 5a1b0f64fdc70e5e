package rules

// DaemonSetUpdateSurge lets a DaemonSet's rolling update honour maxSurge
// (alpha and off in 1.21, beta and on in 1.22, GA and locked in 1.25,
// removed in 1.27: kube_features.go of v1.21.14, v1.22.17, v1.25.16,
// v1.27.16). With it off SurgeCount is 0 (daemonset_util.go).
const DaemonSetUpdateSurge = "DaemonSetUpdateSurge"

// KindDaemonSetUpdate is the DaemonSet controller's rolling update (a
// scale-in never reads it).
const KindDaemonSetUpdate = "DS update"

// DaemonSetRules are the DaemonSet controller's rolling-update switches
// (rollingUpdate in pkg/controller/daemon/update.go).
type DaemonSetRules struct {
	// Surge: maxSurge is read; off, SurgeCount is 0 and every update
	// takes the maxUnavailable path.
	Surge bool
	// UnavailableOldCount: with maxSurge 0, an old pod that is already
	// unavailable counts against maxUnavailable while it is replaced
	// (numUnavailable++, from 1.28); before, it was replaced outside the
	// count, so as many available old pods went on top.
	UnavailableOldCount bool
}

var daemonSetSwitches = []Switch{
	{Field: "DaemonSet.Surge", Kind: KindDaemonSetUpdate, Gate: DaemonSetUpdateSurge,
		What: "a rolling update honours maxSurge (new pod beside the old one)", ref: func(r *RuleSet) *bool { return &r.DaemonSet.Surge }},
	{Field: "DaemonSet.UnavailableOldCount", Kind: KindDaemonSetUpdate, Since: 28,
		What: "with maxSurge 0, already-unavailable old pods count against maxUnavailable", ref: func(r *RuleSet) *bool { return &r.DaemonSet.UnavailableOldCount }},
}
