package desired

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// Applied is the live object after a client-side `kubectl apply` of the
// manifest: the three-way strategic merge of the last applied
// configuration (nil when the live object has none), the manifest and the
// live object, with into's type for the merge keys (containers by name,
// and so on). So a field the manifest leaves out keeps its live value,
// and one the last apply set and the manifest drops is removed. into is
// filled with the result (a *appsv1.Deployment, *appsv1.StatefulSet). What
// the API server then defaults is not added.
func Applied(manifest *unstructured.Unstructured, live any, lastApplied map[string]any, into any) error {
	meta, err := strategicpatch.NewPatchMetaFromStruct(into)
	if err != nil {
		return err
	}
	current, err := json.Marshal(live)
	if err != nil {
		return err
	}
	modified, err := json.Marshal(manifest.Object)
	if err != nil {
		return err
	}
	var original []byte
	if lastApplied != nil {
		if original, err = json.Marshal(lastApplied); err != nil {
			return err
		}
	}
	patch, err := strategicpatch.CreateThreeWayMergePatch(original, modified, current, meta, true)
	if err != nil {
		return fmt.Errorf("merging the manifest with the live object as kubectl apply does: %v", err)
	}
	merged, err := strategicpatch.StrategicMergePatchUsingLookupPatchMeta(current, patch, meta)
	if err != nil {
		return fmt.Errorf("merging the manifest with the live object as kubectl apply does: %v", err)
	}
	return json.Unmarshal(merged, into)
}
