// Package deployment models the replica arithmetic of the Deployment
// controller (kube-controller-manager 1.21-1.37,
// pkg/controller/deployment): how a sync changes the spec.replicas of a
// Deployment's ReplicaSets. It never picks pods: after every change that
// shrinks an RS, the caller picks the victims (RS ordering engine) and
// reports the new availability before the next call.
//
// It is pure: no client, no clock (times come in as fields), no globals.
//
// # API
//
//	Sync(d, rss, v)           one syncDeployment pass: Scale if paused or
//	                          IsScalingEvent, else Rollout.
//	Scale(d, rss, v)          sync() -> scale(): FindActiveOrLatest, then
//	                          IsSaturated, then (RollingUpdate only)
//	                          proportional scaling.
//	Rollout(d, rss, v)        one rolloutRolling / rolloutRecreate; nothing
//	                          when paused (the controller runs Scale then).
//	IsScalingEvent(d, rss, v) some active RS's desired-replicas != spec.replicas.
//	ResolveFenceposts, MaxSurge, MaxUnavailable, MinAvailable: as in
//	deploymentutil.
//
// Each call returns the ReplicaSets in input order (a created RS is
// appended) with new Replicas and annotations, and the size changes in the
// order the controller makes them (annotation-only updates are applied but
// not listed). A Change with Error was attempted and failed (API validation,
// or an error inside the sync); it is not applied and the sync ended there.
//
// # One sync per call
//
// A rolling sync runs reconcileNewReplicaSet (new RS above spec.replicas is
// cut to spec.replicas; below, it grows within spec.replicas+maxSurge) and
// returns if that changed the size; otherwise reconcileOldReplicaSets:
// maxScaledDown = Σspec.replicas - minAvailable - (new.spec.replicas -
// new.available); if > 0, cleanupUnhealthyReplicas (oldest first, up to
// spec-available per RS, within maxScaledDown), then
// scaleDownOldReplicaSetsForRollingUpdate (oldest first, Σavailable of the
// active old RSes and the new RS, minus minAvailable; not bounded by
// maxScaledDown). If an old RS reports Available > Replicas, cleanup errors
// and the controller skips the old RSes for that sync.
//
// A Recreate sync scales every active old RS to 0 and returns if it did;
// then waits while any old RS has StatusReplicas or RunningPods > 0; then
// creates the new RS if missing and scales it to spec.replicas.
//
// # Caller contract
//
//   - Available is status.availableReplicas (ready for minReadySeconds).
//     Pods the controller adds start unavailable; when an RS shrinks, the RS
//     controller deletes unready pods first, so Available usually becomes
//     min(Available, Replicas) once its status catches up. Calling Rollout
//     before that (Available > Replicas) reproduces the stale-status case.
//   - StatusReplicas/RunningPods matter only for Recreate.
//   - d.StatusReplicas is the proportion's fallback denominator.
//   - Strategy fields as stored: the API server defaults maxSurge and
//     maxUnavailable to 25%; nil is read as the code reads it.
//   - No New RS: Rollout creates it (RollingUpdate at once, with
//     NewRSNewReplicas; Recreate once old pods are gone) named
//     d.NewReplicaSetName, created at d.NewReplicaSetCreated, and for
//     RollingUpdate the same sync goes on. Scale never creates it.
//
// Not modelled: deletion, the legacy rollback annotation, revision and
// status updates, hash collisions, old RS cleanup (revisionHistoryLimit),
// progress deadlines, API errors other than negative replicas.
//
// # Versions
//
// Version selects the two behaviour switches (rules.DeploymentRules):
// annotation parsing (≤1.31 strconv.Atoi + int32(), so signs are accepted,
// values wrap, and max-replicas "0" or missing with status.replicas 0
// divides by zero; 1.32+ non-negative int32, 0 falls back to
// status.replicas, then to fraction 0) and integer.RoundToInt32 (≤1.30
// int32(a±0.5), 1.31+ math.Round; equal for every value reachable here).
// The division by zero is modelled with amd64's int32(±Inf) = MinInt32;
// the resulting sizes can go negative, which the API server rejects. arm64
// saturates instead and would produce different (huge) sizes.
package deployment
