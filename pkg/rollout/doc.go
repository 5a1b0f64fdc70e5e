// Package rollout predicts a Deployment's rollout step by step: which old
// pods each step deletes (the ReplicaSet controller's ranking, from
// pkg/engine, over the related pods of every ReplicaSet), where each new
// pod goes (the scheduler's filters, pkg/scheduling), how low
// availability falls against each PodDisruptionBudget (pkg/disruption),
// and whether the rollout completes, stalls or never starts.
//
// The replica arithmetic is pkg/deployment's (the controller's Sync, so
// rolloutRolling, rolloutRecreate and a pending scaling event). A step
// runs syncs until the controller has nothing left to do, then waits for
// the new pods it created to become available; they are taken to become
// available together (if they become available one at a time, the
// controller makes the same deletions in smaller syncs, and the ranking
// may then split a tie differently: the step is then marked uncertain
// only where the engine says so). Pods deleted in a step keep their node's
// resources until the step ends.
//
// It is pure: no client, no clock (Now comes in), no globals.
package rollout
