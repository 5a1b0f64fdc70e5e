package cmd

import (
	"fmt"
	"strings"

	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/rules"
)

const example = `  # Which pods would die if deploy/web were scaled to 3, and why
  kubectl scale-preview deploy/web --replicas=3

  # The same for a ReplicaSet, a ReplicationController or a StatefulSet
  kubectl scale-preview rs web-7d9f8 --replicas=1 -n shop
  kubectl scale-preview statefulsets.v1.apps/db --replicas=2

  # A Job: lower its parallelism; an elastic Indexed Job: completions with it
  kubectl scale-preview job/train --parallelism=2 --completions=2

  # The victims' names only, ready for xargs
  kubectl scale-preview deploy/web --replicas=3 -o name

  # Machine-readable, for a runbook; stop if chance decides any victim
  kubectl scale-preview deploy/web --replicas=3 -o json --fail-if-uncertain
  kubectl scale-preview deploy/web --replicas=3 -o jsonpath='{.victims[*]}'

  # A GitOps change before it merges: the scale-ins that applying these
  # manifests causes, pods from the cluster (as kubectl diff -f reads them)
  kubectl scale-preview --desired -f k8s/ -R -n shop

  # Keep the answer current while pods change (Ctrl-C stops)
  kubectl scale-preview deploy/web --replicas=3 --watch

  # Offline, from saved objects (files, directories, -R, or - for stdin),
  # with the rules of Kubernetes 1.27
  kubectl get deploy,rs,pods -n shop -o yaml > snap.yaml
  kubectl scale-preview -f snap.yaml deploy/web --replicas=3 -n shop --kube-version 1.27`

// longHelp is --help's description: what the plugin does, how to read the
// rule codes, and the exit codes scripts can rely on.
func longHelp() string {
	return `Predict which pods the Kubernetes controller would delete if a Deployment,
ReplicaSet, ReplicationController or StatefulSet were scaled to --replicas
(a Job's --parallelism lowered), in deletion order, and which rule decided
each. It reads the live objects
(or files with -f) and changes nothing in the cluster.

Where the controller leaves the choice to chance (full ties, its unstable
sort), each pod shows its probability of deletion, e.g. "DELETE 67%".

Rule codes (the controller compares two pods rule by rule; the first rule
that separates them decides which goes first):
` + ruleHelp() + `
Exit codes:
` + exitHelp() + `
Rules of Kubernetes ` + fmt.Sprintf("1.%d to 1.%d", rules.Oldest, rules.Newest) + ` are known; see --kube-version.`
}

func ruleHelp() string {
	rows := [][2]string{
		{prediction.RuleUnassigned, "unassigned pods (no node yet) go first"},
		{prediction.RulePhase, "phase: Pending, then Unknown, then Running"},
		{prediction.RuleReadiness, "not-ready pods go first"},
		{prediction.RuleDeletionCost, "lower controller.kubernetes.io/pod-deletion-cost goes first"},
		{prediction.RuleColocation, "pods sharing a node with more of their siblings go first"},
		{prediction.RuleReadyTime, "more recently ready first; log2 age buckets with LogarithmicScaleDown"},
		{prediction.RuleRestarts, "more container restarts go first"},
		{prediction.RuleCreationTime, "newer first; log2 age buckets with LogarithmicScaleDown"},
		{prediction.RuleTie, "no rule separates the pods: chance decides"},
		{prediction.RuleRace, "two ReplicaSets shrink at once; which one acts first decides"},
		{prediction.RuleOrdinal, "StatefulSets: the highest ordinal goes first"},
	}
	return table(rows)
}

func exitHelp() string {
	rows := [][2]string{
		{fmt.Sprint(ExitOK), "ok (also a scale-up or no change: no pod would be deleted)"},
		{fmt.Sprint(ExitError), "any other error"},
		{fmt.Sprint(ExitUsage), "bad flags or arguments"},
		{fmt.Sprint(ExitNotFound), "the object does not exist"},
		{fmt.Sprint(ExitForbidden), "forbidden or unauthorized"},
		{fmt.Sprint(ExitUnreachable), "the API server cannot be reached"},
		{fmt.Sprint(ExitBadFile), "a -f file is unreadable, malformed, empty or incomplete"},
		{fmt.Sprint(ExitUnsupported), "a kind the plugin does not model"},
		{fmt.Sprint(ExitUncertain), "--fail-if-uncertain and chance decides some pod's fate"},
	}
	return table(rows)
}

func table(rows [][2]string) string {
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "  %-8s %s\n", r[0], r[1])
	}
	return b.String()
}
