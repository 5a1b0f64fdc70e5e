// Package statefulset predicts which pods the StatefulSet controller deletes
// when a StatefulSet is scaled in, and in what order, for the controller of
// Kubernetes 1.21 to 1.37.
//
// It is a pure model of pkg/controller/statefulset (stateful_set.go
// getPodsForStatefulSet, stateful_set_control.go updateStatefulSet,
// processReplica, processCondemned, runForAll, stateful_set_utils.go and
// stateful_pod_control.go): no client, no clock (Input.Now), no globals.
//
// # API
//
//	res, err := statefulset.Predict(statefulset.Input{
//		Set: set, Pods: pods, Claims: pvcs, ClaimsKnown: true,
//		Replicas: 2, Now: now, Minor: 37, Gates: gates,
//	})
//
// Result.Pods gives every related pod a Fate (delete, keep, terminating,
// ignored, recreate, create) and a Reason; Result.Victims lists the
// deletions in order; Result.Stalled/StallPod/StallReason say where an
// OrderedReady scale-down stops; Result.Claims says which
// PersistentVolumeClaims go with the pods.
//
// # Model
//
// Claiming: a pod counts if its controller reference has the set's UID (1.34+:
// also kind StatefulSet and the set's name, as the owner index is keyed by
// them), or it is an orphan that is not being deleted; and its labels match
// the selector and its name parses as <set>-<ordinal> (ParentAndOrdinal).
// An ordinal that overflows int32 makes the pod a member with ordinal -1:
// claimed, never kept nor deleted. Leading zeros parse ("web-007" is 7).
//
// Partition: kept ordinals are [start, start+replicas), start being
// spec.ordinals.start when the version honours it; any other ordinal ≥ 0 is
// condemned, deleted highest first, so ordinals below start go last.
//
// OrderedReady is simulated sync by sync, pods keeping their state except
// that a deleted or terminating pod disappears before the next step:
//
//   - every in-range ordinal, ascending, must exist, not be Failed (or, 1.27+,
//     Succeeded), not be terminating, be Running and Ready and, with
//     minReadySeconds, available; the first that fails ends every sync and
//     the scale-down stalls there;
//   - then the highest condemned pod: if terminating, the controller waits
//     for it; if it is not Running and Ready, or not available, and is not
//     the first unhealthy pod, the scale-down stalls; otherwise it is deleted
//     and the next sync takes the next one.
//
// The first unhealthy pod is the lowest in-range one, else the lowest
// condemned one, that is terminating or (≤1.33) not Running and Ready or
// (1.34+) not available.
//
// Parallel deletes every condemned pod that is not already terminating, in
// one sync, whatever the health of any pod.
//
// PVCs: with whenScaled: Delete (and the policy active for the version), each
// condemned pod's claims <template>-<set>-<ordinal> get the pod as owner and
// go when it goes, unless another owner remains or (1.28+) another
// controller or a stale reference makes the controller leave them alone.
//
// # Version switches
//
// Which of the behaviours above a release has (minReadySeconds, the
// whenScaled policy, start ordinals, slow-start Parallel deletions, Succeeded
// pods recreated, claims left to another controller, availability-based
// "first unhealthy" pod, the owner index, the Recreate strategy) is decided
// by rules.StatefulSetRules, from the version table in pkg/rules
// (docs/rules.md).
//
// Not modelled: API errors and retries, expectations and timing, the
// rolling update that follows a scale-down (a note says when one is
// pending), stale-PVC blocking of pod creation (timing only).
package statefulset
