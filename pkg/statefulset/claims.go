package statefulset

import (
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClaimName is getPersistentVolumeClaimName: <template>-<set>-<ordinal>.
func ClaimName(template, set string, ordinal int) string {
	return fmt.Sprintf("%s-%s-%d", template, set, ordinal)
}

// claims predicts the PersistentVolumeClaims of condemned pods. With
// whenScaled: Delete the controller makes each condemned pod the owner of
// its claims (and drops the set's reference) before deleting pods, so the
// garbage collector removes a claim once its pod is gone and no other owner
// remains.
func (s *sim) claims() {
	tmpls := s.set.Spec.VolumeClaimTemplates
	policy := appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	if p := s.set.Spec.PersistentVolumeClaimRetentionPolicy; p != nil && p.WhenScaled != "" {
		policy = p.WhenScaled
	}
	if !s.r.AutoDeletePVC {
		if policy != appsv1.RetainPersistentVolumeClaimRetentionPolicyType {
			s.note("whenScaled: %s is not acted on in 1.%d (StatefulSetAutoDeletePVC off or absent): claims are kept", policy, s.in.Minor)
		}
		policy = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	s.res.ClaimPolicy = string(policy)
	if len(tmpls) == 0 {
		return
	}
	byName := map[string]*corev1.PersistentVolumeClaim{}
	if s.in.ClaimsKnown {
		for _, c := range s.in.Claims {
			if c != nil && (c.Namespace == "" || s.set.Namespace == "" || c.Namespace == s.set.Namespace) {
				byName[c.Name] = c
			}
		}
	} else {
		s.note("PersistentVolumeClaims could not be read: the claim names below are the expected ones, unchecked")
	}
	del := policy == appsv1.DeletePersistentVolumeClaimRetentionPolicyType
	behind := 0
	for _, f := range s.res.Pods {
		if f.Pod == nil || (f.Fate != FateDelete && f.Fate != FateTerminating) || !s.condemnedOrd(f.Ordinal) {
			continue
		}
		if f.Fate == FateDelete && !f.BeforeStall {
			// The controller moves the claim's ownership to the pod in this
			// sync too, but the claim goes only with the pod: not now.
			behind++
			continue
		}
		for _, t := range tmpls {
			cf := ClaimFate{Name: ClaimName(t.Name, s.set.Name, f.Ordinal), Template: t.Name, Ordinal: f.Ordinal, Pod: f.Name}
			// The name follows from the template and the ordinal; a claim
			// missing from the snapshot is still named (the controller
			// skips it only if it really does not exist, which a file
			// cannot tell).
			claim := byName[cf.Name]
			cf.Checked = claim != nil
			cf.Fate, cf.Reason = ClaimRetain, "whenScaled: Retain: the claim stays for a later scale-up"
			if del {
				cf.Fate, cf.Reason = s.deleteFate(claim, f)
			}
			s.res.Claims = append(s.res.Claims, cf)
		}
	}
	if behind > 0 && del {
		s.note("the claims of the %d pod(s) behind the stall are deleted only when the scale-down gets to them", behind)
	}
}

func (s *sim) condemnedOrd(ord int) bool { return ord >= 0 && !s.inRange(ord) }

// deleteFate applies whenScaled: Delete to one existing (or, when claim is
// nil, unchecked) claim of condemned pod f.
func (s *sim) deleteFate(claim *corev1.PersistentVolumeClaim, f PodFate) (string, string) {
	after := "the controller makes " + f.Name + " its owner; the garbage collector deletes the claim after the pod"
	if claim == nil {
		return ClaimDelete, "whenScaled: Delete: " + after
	}
	var stale, foreignCtl, others []string
	for _, ref := range claim.OwnerReferences {
		isSet := ref.APIVersion == "apps/v1" && ref.Kind == "StatefulSet" && ref.Name == s.set.Name
		isPod := ref.APIVersion == "v1" && ref.Kind == "Pod" && ref.Name == f.Name
		switch {
		case isSet && ref.UID != s.set.UID, isPod && ref.UID != f.Pod.UID:
			stale = append(stale, refName(ref))
		case isSet || isPod || ref.UID == s.set.UID || ref.UID == f.Pod.UID:
		case ref.Controller != nil && *ref.Controller:
			foreignCtl = append(foreignCtl, refName(ref))
		default:
			others = append(others, refName(ref))
		}
	}
	if s.r.UnexpectedController {
		// isClaimOwnerUpToDate leaves such claims alone.
		if len(stale) > 0 {
			return ClaimRetain, "owner reference to " + strings.Join(stale, ", ") + " has another UID (stale): the controller leaves the claim alone"
		}
		if len(foreignCtl) > 0 {
			return ClaimRetain, "controlled by " + strings.Join(foreignCtl, ", ") + ": the retention policy is ignored for this claim (ConflictingController event)"
		}
	}
	if owners := slices.Concat(foreignCtl, others); len(owners) > 0 {
		return ClaimRetain, "also owned by " + strings.Join(owners, ", ") + ": " + after + " only when every owner is gone, so it stays while they exist"
	}
	return ClaimDelete, "whenScaled: Delete: " + after
}

func refName(ref metav1.OwnerReference) string { return ref.Kind + "/" + ref.Name }
