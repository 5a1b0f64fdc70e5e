package cmd

import (
	"strings"

	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

// kinds maps what kubectl accepts for the supported kinds.
var kinds = map[string]string{
	"deploy": snapshot.Deployment, "deployment": snapshot.Deployment, "deployments": snapshot.Deployment,
	"deployment.apps": snapshot.Deployment, "deployments.apps": snapshot.Deployment,
	"rs": snapshot.ReplicaSet, "replicaset": snapshot.ReplicaSet, "replicasets": snapshot.ReplicaSet,
	"replicaset.apps": snapshot.ReplicaSet, "replicasets.apps": snapshot.ReplicaSet,
	"rc": snapshot.ReplicationController, "replicationcontroller": snapshot.ReplicationController, "replicationcontrollers": snapshot.ReplicationController,
	"sts": snapshot.StatefulSet, "statefulset": snapshot.StatefulSet, "statefulsets": snapshot.StatefulSet,
	"statefulset.apps": snapshot.StatefulSet, "statefulsets.apps": snapshot.StatefulSet,
}

// unsupported explains kinds that have no scale-in victim choice to predict.
var unsupported = map[string]string{
	"daemonset":               "DaemonSets have no replica count: their pods go when nodes stop being eligible",
	"ds":                      "DaemonSets have no replica count: their pods go when nodes stop being eligible",
	"job":                     "Jobs shrink by parallelism with a different comparator (no cost, no rank, exact times); not modelled",
	"cronjob":                 "CronJobs create Jobs; they are not scaled",
	"cj":                      "CronJobs create Jobs; they are not scaled",
	"pod":                     "a pod is not scaled; name its Deployment, ReplicaSet, ReplicationController or StatefulSet",
	"po":                      "a pod is not scaled; name its Deployment, ReplicaSet, ReplicationController or StatefulSet",
	"hpa":                     "scale-preview takes the workload the autoscaler targets, not the autoscaler",
	"horizontalpodautoscaler": "scale-preview takes the workload the autoscaler targets, not the autoscaler",
}

func parseTarget(args []string) (snapshot.Ref, error) {
	var typ, name string
	switch {
	case len(args) == 1 && strings.Contains(args[0], "/"):
		typ, name, _ = strings.Cut(args[0], "/")
	case len(args) == 2:
		typ, name = args[0], args[1]
	default:
		return snapshot.Ref{}, withCode(ExitUsage, "name one object: TYPE/NAME or TYPE NAME, e.g. kubectl scale-preview deploy/web --replicas=3")
	}
	if name == "" {
		return snapshot.Ref{}, withCode(ExitUsage, "missing object name after %q", typ)
	}
	t := strings.ToLower(typ)
	if kind, ok := kinds[t]; ok {
		return snapshot.Ref{Kind: kind, Name: name}, nil
	}
	base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(t, ".apps"), ".batch"), "s")
	if why, ok := unsupported[base]; ok {
		return snapshot.Ref{}, withCode(ExitUnsupported, "unsupported kind %q: %s; supported: deploy, rs, rc, sts", typ, why)
	}
	if why, ok := unsupported[t]; ok {
		return snapshot.Ref{}, withCode(ExitUnsupported, "unsupported kind %q: %s; supported: deploy, rs, rc, sts", typ, why)
	}
	return snapshot.Ref{}, withCode(ExitUnsupported, "unsupported resource type %q: scale-preview handles deploy, rs, rc and sts", typ)
}
