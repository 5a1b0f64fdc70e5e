package cmd

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/scale-preview/scale-preview/pkg/rollout"
	"github.com/scale-preview/scale-preview/pkg/source"
)

// findDaemonSet sets the DaemonSet in the rollout's input.
func (o *RolloutOptions) findDaemonSet(cl *source.Cluster, in *rollout.Input) (rolloutTarget, error) {
	for _, d := range cl.Workloads.DaemonSets {
		if d.Name == o.name && d.Namespace == o.ref.Namespace {
			in.DaemonSet = d
			return rolloutTarget{"DaemonSet", d.Namespace, d.Name, d.Status.DesiredNumberScheduled}, nil
		}
	}
	return rolloutTarget{}, withCode(ExitNotFound, "daemonset %q not found in namespace %q (check the name and -n NAMESPACE)", o.name, o.ref.Namespace)
}

// readRevisions gives a DaemonSet's rollout the ControllerRevisions of its
// namespace (an --image back to an earlier template reuses that
// revision): listed live, from the files offline.
func (o *RolloutOptions) readRevisions(ctx context.Context, cl *source.Cluster, in *rollout.Input) error {
	if in.DaemonSet == nil {
		return nil
	}
	if o.offline() {
		in.Revisions, in.RevisionsRead = cl.Revisions, cl.Kinds["ControllerRevision"]
		return nil
	}
	list, err := o.client.AppsV1().ControllerRevisions(o.ref.Namespace).List(ctx, metav1.ListOptions{})
	if apierrors.IsForbidden(err) {
		return withCode(ExitForbidden, "%s", (&source.PermissionError{What: "list controllerrevisions", Err: err, Purpose: "predicting a rollout"}).Error())
	}
	if err != nil {
		return err
	}
	for i := range list.Items {
		in.Revisions = append(in.Revisions, &list.Items[i])
	}
	in.RevisionsRead = true
	return nil
}
