package eviction

import (
	"time"

	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// observation is one signal's available and capacity
// (makeSignalObservations).
type observation struct {
	Available, Capacity int64
	Time                time.Time
	Assumed             bool // from --assume, not the summary
}

func u64(p *uint64) int64 {
	if p == nil {
		return 0
	}
	return int64(*p)
}

// observe is makeSignalObservations.
func observe(s *statsapi.Summary) map[Signal]observation {
	obs := map[Signal]observation{}
	mem := func(sig Signal, m *statsapi.MemoryStats) {
		if m != nil && m.AvailableBytes != nil && m.WorkingSetBytes != nil {
			obs[sig] = observation{Available: u64(m.AvailableBytes), Capacity: u64(m.AvailableBytes) + u64(m.WorkingSetBytes), Time: m.Time.Time}
		}
	}
	fs := func(bytes, inodes Signal, f *statsapi.FsStats) {
		if f == nil {
			return
		}
		if f.AvailableBytes != nil && f.CapacityBytes != nil {
			obs[bytes] = observation{Available: u64(f.AvailableBytes), Capacity: u64(f.CapacityBytes), Time: f.Time.Time}
		}
		if f.InodesFree != nil && f.Inodes != nil {
			obs[inodes] = observation{Available: u64(f.InodesFree), Capacity: u64(f.Inodes), Time: f.Time.Time}
		}
	}
	mem(MemoryAvailable, s.Node.Memory)
	for i := range s.Node.SystemContainers {
		if s.Node.SystemContainers[i].Name == statsapi.SystemContainerPods {
			mem(AllocatableMemoryAvailable, s.Node.SystemContainers[i].Memory)
			break
		}
	}
	fs(NodeFsAvailable, NodeFsInodesFree, s.Node.Fs)
	if s.Node.Runtime != nil {
		fs(ImageFsAvailable, ImageFsInodesFree, s.Node.Runtime.ImageFs)
		fs(ContainerFsAvailable, ContainerFsInodesFree, s.Node.Runtime.ContainerFs)
	}
	if r := s.Node.Rlimit; r != nil && r.NumOfRunningProcesses != nil && r.MaxPID != nil {
		obs[PIDAvailable] = observation{Available: *r.MaxPID - *r.NumOfRunningProcesses, Capacity: *r.MaxPID, Time: r.Time.Time}
	}
	return obs
}

// sameFs: the summary reports one filesystem's figures twice when the
// runtime's filesystem is the node's (cadvisor returns the same device).
func sameFs(a, b *statsapi.FsStats) bool {
	if a == nil || b == nil {
		return a == b
	}
	return u64(a.CapacityBytes) == u64(b.CapacityBytes) && u64(a.AvailableBytes) == u64(b.AvailableBytes) &&
		u64(a.Inodes) == u64(b.Inodes) && u64(a.InodesFree) == u64(b.InodesFree)
}

// InferLayout reads the filesystem layout from the summary: imagefs with
// nodefs's figures is nodefs; containerfs with imagefs's is imagefs.
func InferLayout(s *statsapi.Summary) Layout {
	if s.Node.Runtime == nil || s.Node.Runtime.ImageFs == nil {
		return Layout{}
	}
	l := Layout{ImageFs: !sameFs(s.Node.Fs, s.Node.Runtime.ImageFs)}
	if cf := s.Node.Runtime.ContainerFs; cf != nil {
		l.Split = !sameFs(cf, s.Node.Runtime.ImageFs)
	}
	return l
}
