package cmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/rules"
)

// The modes' texts (modes.go). Each example's first command is the one
// the root help shows.
const (
	scaleInExample = `  # Which pods would die if deploy/web were scaled to 3, and why
  kubectl scale-preview deploy/web --replicas=3

  # The same for a ReplicaSet, a ReplicationController or a StatefulSet
  kubectl scale-preview rs web-7d9f8 --replicas=1 -n shop
  kubectl scale-preview statefulsets.v1.apps/db --replicas=2

  # The victims' names only, ready for xargs
  kubectl scale-preview deploy/web --replicas=3 -o name

  # Machine-readable, for a runbook; stop if chance decides any victim
  kubectl scale-preview deploy/web --replicas=3 -o json --fail-if-uncertain
  kubectl scale-preview deploy/web --replicas=3 -o jsonpath='{.victims[*]}'

  # The deletion-cost annotations that spare a pod
  kubectl scale-preview deploy/web --replicas=3 --spare web-7d9f8-p6hj

  # Offline, from saved objects (files, directories, -R, or - for stdin),
  # with the rules of Kubernetes 1.27
  kubectl get deploy,rs,pods -n shop -o yaml > snap.yaml
  kubectl scale-preview -f snap.yaml deploy/web --replicas=3 -n shop --kube-version 1.27

  # The same as a mode command
  kubectl scale-preview scale-in deploy/web --replicas=3`

	hpaExample = `  # The autoscaler's next step, and its victims
  kubectl scale-preview hpa/web -n shop

  # Its target scaled to 3 instead
  kubectl scale-preview hpa/web --replicas=3

  # Offline
  kubectl scale-preview hpa/web -f snapshot.yaml`

	jobExample = `  # Lower a Job's parallelism to 2
  kubectl scale-preview job/train --parallelism=2

  # An elastic Indexed Job: completions with it
  kubectl scale-preview job/train --parallelism=2 --completions=2`

	nodeExample = `  # The kubelet's eviction order on worker-1 now
  kubectl scale-preview node/worker-1

  # What if memory fell to 200Mi?
  kubectl scale-preview node/worker-1 --assume memory.available=200Mi

  # Offline: the node, its pods, the kubelet's summary and configz
  kubectl scale-preview node/worker-1 -f node.yaml -f summary.json -f configz.json`

	podExample = `  # Which pods the scheduler deletes to place the pending pod shop/critical
  kubectl scale-preview pod/critical -n shop

  # A pod not created yet: its manifest with the cluster's objects
  kubectl scale-preview pod/critical -n shop -f cluster.yaml -f critical.yaml

  # With the scheduler's own profile
  kubectl scale-preview pod/critical -n shop --scheduler-config sched.yaml`

	desiredExample = `  # The scale-ins that applying the manifests causes, pods from the cluster
  # (as kubectl diff -f reads them)
  kubectl scale-preview --desired -f k8s/ -R -n shop

  # In CI: fail when a victim is left to chance
  kubectl scale-preview --desired -f k8s/ -R --fail-if-uncertain

  # The same as a mode command
  kubectl scale-preview desired -f k8s/ -R -n shop`

	watchExample = `  # Keep the answer current while pods change (Ctrl-C stops)
  kubectl scale-preview deploy/web --replicas=3 --watch

  # One JSON document per change
  kubectl scale-preview deploy/web --replicas=3 -w -o json > predictions.jsonl

  # The same as a mode command
  kubectl scale-preview watch deploy/web --replicas=3`
)

const (
	hpaHelp = `Preview what a HorizontalPodAutoscaler does next: its recommendation from
the metrics in its status, and which pods of its target that scale-in
deletes. --replicas previews another count instead. Also: hpa/NAME.`

	jobHelp = `Predict which pods the Job controller deletes when a Job's parallelism is
lowered (--parallelism), and for an elastic Indexed Job its completions with it
(--completions). Also: job/NAME.`

	nodeHelp = `Predict the kubelet's node-pressure eviction on one node: the order in which
it evicts pods, how many go before every threshold is back at its target, and
the grace period each gets. It reads the node, its pods, the kubelet's stats
summary and configuration (live, or -f files). Where a figure was not
observed, the answer says it is assumed. Victims are namespace/name. Also:
node/NAME.`

	podHelp = `Predict what the scheduler's preemption does for a pending pod: the node it
nominates and the pods it deletes there (in any namespace: victims are
namespace/name), or why nothing is preempted. Also: pod/NAME.`

	desiredHelp = `Read the workloads' desired state from -f (as kubectl diff -f does), compare
it with the cluster, and preview every scale-in that applying it causes.
Also: kubectl scale-preview --desired -f FILE|DIR.`

	watchHelp = `Keep a scale-in's prediction current: watch the workload and its pods, and
print it again (with the time and what changed) whenever its victims or their
certainty change, until Ctrl-C. Also: TYPE/NAME --replicas=N --watch.`
)

// scaleInHelp: what a scale-in preview does and how to read its rule codes.
var scaleInHelp = `Predict which pods the Kubernetes controller would delete if a Deployment,
ReplicaSet, ReplicationController or StatefulSet were scaled to --replicas,
in deletion order, and which rule decided each. Also: kubectl scale-preview
TYPE/NAME --replicas=N.

Where the controller leaves the choice to chance (full ties, its unstable
sort), each pod shows its probability of deletion, e.g. "DELETE 67%".

Rule codes (the controller compares two pods rule by rule; the first rule
that separates them decides which goes first):
` + ruleHelp()

// rootLong is the root's description: what the plugin does, every mode
// with one line and one example (from the registered mode commands, so a
// mode added with AddCommand is listed), and the exit codes.
func rootLong(root *cobra.Command) string {
	return `Predict which pods Kubernetes would delete or evict, in order, and which rule
decided each. It reads the live objects (or files with -f) and changes nothing
in the cluster. Where chance decides, each pod shows its probability.

Modes (kubectl scale-preview MODE --help: each one's usage, flags and examples;
TYPE/NAME as the argument runs the mode of its kind):
` + modeList(root) + `
Exit codes:
` + exitHelp() + `
Rules of Kubernetes ` + fmt.Sprintf("1.%d to 1.%d", rules.Oldest, rules.Newest) + ` are known; see --kube-version.`
}

// setHelp gives the root its mode list when the help is shown, so that
// every mode command registered by then is in it, and a usage template
// without cobra's "Available Commands" (the list is in the description).
//
// TYPE/NAME --help shows the help of the mode that TYPE runs.
func setHelp(root *cobra.Command) {
	help := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		if c == root {
			if m := modeOfArgs(root, root.Flags().Args()); m != nil {
				c = m
			} else {
				root.Long = rootLong(root)
			}
		}
		help(c, args)
	})
	root.SetUsageTemplate(usageTemplate)
}

// modeOfArgs is the mode command that TYPE/NAME (or TYPE NAME) runs, nil
// when the arguments name no object of a built-in kind.
func modeOfArgs(root *cobra.Command, args []string) *cobra.Command {
	arg, err := parseArgs(args)
	if err != nil {
		return nil
	}
	ref, err := resolve(newOfflineMapper(), arg)
	if err != nil {
		return nil
	}
	o := &Options{ref: ref}
	for _, c := range root.Commands() {
		if c.Name() == o.runMode() {
			return c
		}
	}
	return nil
}

const usageTemplate = `Usage:{{if .Runnable}}
  {{.UseLine}}{{end}}{{if .HasAvailableSubCommands}}
  {{.CommandPath}} MODE [NAME] [flags]{{end}}{{if .HasExample}}

Examples:
{{.Example}}{{end}}

Flags:
{{if .HasParent}}{{.LocalFlags.FlagUsages | trimTrailingWhitespaces}}{{else}}{{.LocalNonPersistentFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}

kubectl's connection flags:
{{if .HasParent}}{{.InheritedFlags.FlagUsages | trimTrailingWhitespaces}}{{else}}{{.PersistentFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}
{{if .HasAvailableSubCommands}}
Use "{{.CommandPath}} MODE --help" for a mode's usage, flags and examples.{{else}}
Use "kubectl scale-preview --help" for every mode and the exit codes.{{end}}
`

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

// exitHelp is the README's "Exit codes" table.
func exitHelp() string {
	rows := [][2]string{
		{fmt.Sprint(ExitOK), "prediction printed (also when nothing is deleted)"},
		{fmt.Sprint(ExitError), "any other error"},
		{fmt.Sprint(ExitUsage), "usage: a bad flag, argument, gate, version, threshold what-if or steering request"},
		{fmt.Sprint(ExitNotFound), "the object does not exist (in the cluster or in the files)"},
		{fmt.Sprint(ExitForbidden), "forbidden by RBAC, or unauthorized"},
		{fmt.Sprint(ExitUnreachable), "the API server cannot be reached, times out, or its certificate does not verify"},
		{fmt.Sprint(ExitBadFile), "a -f file is unreadable, malformed, or lacks what the prediction needs"},
		{fmt.Sprint(ExitUnsupported), "unsupported kind (DaemonSet, CronJob, ...)"},
		{fmt.Sprint(ExitUncertain), "--fail-if-uncertain and some fate is not determined, or rests on assumed figures"},
		{fmt.Sprint(ExitInterrupted), "interrupted (Ctrl-C)"},
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
