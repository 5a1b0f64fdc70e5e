package prediction

// The strings of the JSON contract that readers match on. Change them only
// additively: scripts compare against these values.

// Fates of a pod (Pod.Fate).
const (
	FateDelete      = "delete"
	FateKeep        = "keep"
	FateTerminating = "terminating" // already going; never counted
	FateIgnored     = "ignored"     // seen but not the controller's to delete
	// FateBlocked: a condemned StatefulSet pod that OrderedReady will not
	// delete until the stall clears.
	FateBlocked = "blocked"
	// FateRecreate: an in-range StatefulSet pod that finished; the
	// controller deletes and recreates it, which is not a scale-in victim.
	FateRecreate = "recreate"
)

// Fates of a StatefulSet's claim (Claim.Fate).
const (
	ClaimDelete = "delete"
	ClaimRetain = "retain"
)

// Rule identifiers (Decision.Rule, ContenderGroup.Rule): the eight rules of
// the ReplicaSet controller's comparator in the order it applies them,
// RuleTie when none separates two pods, RuleOrdinal for a StatefulSet's
// highest-ordinal-first order and RuleRace where the controllers' timing
// decides.
const (
	RuleUnassigned   = "R1"
	RulePhase        = "R2"
	RuleReadiness    = "R3"
	RuleDeletionCost = "R4"
	RuleColocation   = "R5"
	RuleReadyTime    = "R6"
	RuleRestarts     = "R7"
	RuleCreationTime = "R8"
	RuleTie          = "TIE"
	RuleOrdinal      = "ORDINAL"
	RuleRace         = "RACE"
)

// RuleIDs lists R1..R8 in the comparator's order.
var RuleIDs = [...]string{RuleUnassigned, RulePhase, RuleReadiness, RuleDeletionCost, RuleColocation, RuleReadyTime, RuleRestarts, RuleCreationTime}
