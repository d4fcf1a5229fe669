package container

import (
	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/tune"
)

func planOf(s *snapshot.Snapshot, w *audit.Workload) tune.Plan { return tune.MakePlan(s, w) }
